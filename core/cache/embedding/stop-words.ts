// The words the lexical embedding (lexical.ts) leaves out: articles, pronouns,
// auxiliaries, prepositions and politeness, per language. Two prompts that
// differ only in these ask the same thing ("can you please tell me the capital
// of France" / "capital of France?"). Left in on purpose: question words (why
// and how ask different things), negations and numbers (the prompt guard reads
// those, and they are content).

const ENGLISH = `a an the and or but if then so of to in on at by for from with about into onto over under as
  is are was were be been being am do does did done doing have has had having will would shall should can could may might must
  i me my mine myself you your yours yourself we us our ours they them their theirs he him his she her hers it its itself
  this that these those there here some any such very really just also too quite rather
  please kindly thanks thank hi hello hey dear ok okay help tell give let want need like know wonder
  briefly quick quickly simply basically actually`;
const FRENCH = `le la les l un une des du de d et ou mais si donc en au aux à a par pour sur sous dans avec chez vers
  est sont était étaient être été suis es sommes êtes ai as avons avez ont avait fait faire peux peut pouvez pourrais pourriez
  je j me m moi tu te t toi il elle on nous vous ils elles leur leurs lui se s son sa ses mon ma mes ton ta tes notre nos votre vos
  ce c cet cette ces ça cela ceci qui que qu dont y très vraiment aussi juste stp svp plaît merci bonjour salut dire donner aider veux voudrais
  peu petit simplement rapidement`;
const GERMAN = `der die das den dem des ein eine einen einem einer eines und oder aber wenn dann so von zu zum zur in im an am auf bei
  für mit über unter aus nach vor um als ist sind war waren sein bin bist seid wird werden wurde hat haben hatte habe hast
  kann kannst können könnte könntest könnten soll sollte muss müssen möchte ich mich mir mein meine du dich dir dein deine
  wir uns unser er ihn ihm sein seine sie ihr ihre es man dies diese dieser dieses hier da sehr wirklich auch nur mal
  bitte danke hallo sag sagen gib geben erklär hilf helfen einfach kurz schnell doch eigentlich`;
const SPANISH = `el la los las lo un una unos unas y o pero si entonces de del al a en con por para sobre que
  es son era eran ser sido estar está están soy eres somos hay he ha has han hacer hace puedes puede podrías podría
  yo me mi mis tú te ti tu tus él ella nosotros nos vosotros ellos ellas les le se su sus este esta esto estos estas ese esa eso
  muy realmente también solo favor gracias hola dime decir dar ayuda ayudar quiero quisiera necesito rápidamente simplemente`;
const PORTUGUESE = `o a os as um uma uns umas e ou mas se então de do da dos das ao aos à às em no na nos nas num numa com por pelo pela para sobre que
  é são era eram ser sido estar está estão sou somos há tem têm ter fazer faz pode podes poderia
  eu me mim meu minha meus minhas tu te ti você vocês ele ela eles elas lhe lhes seu sua seus suas este esta isto esse essa isso aquele
  muito realmente também só apenas favor obrigado obrigada olá oi diga dizer dar ajuda ajudar quero queria preciso rapidamente simplesmente`;
const ITALIAN = `il lo la i gli le un uno una e ed o ma se allora di del dello della dei degli delle a al allo alla ai agli alle da dal dalla in nel nello nella nei
  con su sul sulla per tra fra che è sono era erano essere stato ho hai ha abbiamo avete hanno fare fa puoi può potresti potrebbe
  io mi me mio mia miei mie tu ti te tuo tua lui lei noi ci voi loro si suo sua suoi sue questo questa questi queste quello quella
  molto davvero anche solo favore grazie ciao dimmi dire dare aiuto aiutare voglio vorrei rapidamente semplicemente`;
const RUSSIAN = `и или но а если то в во на с со к ко по о об от до из у за под над при для про это этот эта эти тот та те
  есть был была было были быть я меня мне мой моя мои ты тебя тебе твой вы вас вам ваш мы нас нам наш он его ему она её ей они их им
  себя свой же ли бы очень просто пожалуйста спасибо привет скажи скажите дай дайте помоги помогите можешь можете могу хочу нужно`;

/** Every listed word, lower case, accents kept as written and folded (the embedding folds accents of Latin words). */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  [ENGLISH, FRENCH, GERMAN, SPANISH, PORTUGUESE, ITALIAN, RUSSIAN]
    .flatMap((list) => list.split(/\s+/))
    .filter((word) => word !== "")
    .flatMap((word) => [word, foldAccents(word)]),
);

/**
 * Chinese and Japanese characters that only bind a sentence together
 * (particles, the possessive, politeness): the embedding drops them as single
 * characters and keeps them inside character pairs.
 */
export const CJK_STOP_CHARACTERS: ReadonlySet<string> = new Set([..."的了吗呢吧啊呀么是在和与及或也都就请我你您他她它们这那个一把被给对中上下里之以为所着过得地をはがのにでともへやかなねよすますいうたしてくださ"]);

/** "é" to "e", "ß" kept: for words of Latin and Cyrillic scripts only (Japanese kana keep their marks). */
export function foldAccents(word: string): string {
  return word.normalize("NFD").replace(/\p{M}+/gu, "");
}

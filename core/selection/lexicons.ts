// The words and notations that signal each task tag, in English, French,
// German, Spanish, Portuguese, Chinese, Japanese and a little Korean. Compiled once at load: classifying a
// prompt runs a fixed set of regular expressions over its text, never builds one.
import type { TaskTag } from "./tags.ts";

interface Lexicon {
  /** Word stems of Latin-script languages: matched at a word start, any ending ("translat" finds "translation"). */
  stems: string[];
  /** Whole words (matched at both ends): short words whose stem would find others ("sql" but not "sqlite"? both fine; "app" not "apple"). */
  words?: string[];
  /** Chinese and Japanese terms: matched anywhere (those scripts put no spaces between words). */
  cjk: string[];
}

const LEXICONS: Record<Exclude<TaskTag, "general_chat">, Lexicon> = {
  coding: {
    stems: [
      "code", "coding", "program", "function", "debug", "compil", "refactor", "implement", "algorithm", "javascript", "typescript", "python",
      "rust", "golang", "kotlin", "swift", "regex", "regular expression", "stack trace", "exception", "unit test", "api endpoint",
      "database", "query", "script", "bug", "variable", "recursion", "dockerfile", "kubernetes", "git ", "npm", "frontend", "backend",
      "código", "función", "programa", "depura", "fonction", "programm", "débogu", "codage", "funktion", "quellcode", "fehlermeldung",
      "syntax", "função", "funções", "escreva um programa", "singleton", "thread-safe", "threadsicher",
    ],
    words: ["java", "(?:in|em|en) go", "sql", "html", "css", "c\\+\\+", "c#", "bash", "shell", "react", "node\\.js", "php", "ruby", "class", "method", "loop"],
    cjk: ["代码", "程序", "函数", "编程", "调试", "算法", "报错", "コード", "プログラム", "関数", "デバッグ", "実装", "バグ", "アルゴリズム", "編程", "程式", "单例", "线程安全", "哈希表", "无锁"],
  },
  math: {
    stems: [
      "equation", "integral", "derivative", "calculat", "solve for", "proof", "prove", "theorem", "probabilit", "matri", "polynomial", "algebra",
      "geometr", "arithmetic", "factori", "logarithm", "fraction", "percentage", "statistic", "eigen", "vector", "limit of", "sum of",
      "équation", "intégrale", "dérivée", "calcul", "démontr", "théorème", "gleichung", "ableitung", "berechn", "beweis", "wahrscheinlich",
      "ecuación", "derivada", "calcula", "demuestr", "teorema", "probabilidad", "integrale",
      "equação", "equações", "probabilidade", "resolva a equação", "raiz quadrada", "elevado ao", "quanto é", "quanto e ", "cuánto es", "cuanto es",
      "combien font", "combien fait", "wie viel ist", "wieviel ist", "square root", "quadratwurzel", "racine carrée", "raíz cuadrada",
      "fahrenheit", "celsius", "multipli", "divided by", "dividido", "divisé", "geteilt durch", "squared", "to the power", "extremum", "extrema", "extremstell", "extremwert",
    ],
    words: ["\\d+(?:[.,]\\d+)?\\s*%", "math", "maths", "mathematics", "sin", "cos", "tan", "log", "lim", "sqrt", "mod"],
    cjk: ["方程", "积分", "导数", "计算", "证明", "概率", "矩阵", "数学", "方程式", "積分", "微分", "計算", "証明", "確率", "行列", "数式", "求解", "极值", "极大值", "极小值", "확률", "방정식", "적분"],
  },
  reasoning: {
    stems: [
      "why ", "explain why", "reason", "step by step", "logic", "puzzle", "riddle", "deduc", "infer", "compare", "trade-off", "tradeoff",
      "pros and cons", "analy", "evaluat", "argument", "hypothes", "implication", "what would happen", "think through", "plan ",
      "pourquoi", "raisonn", "étape par étape", "compar", "analys", "warum", "begründ", "schritt für schritt", "vergleich", "schlussfolger",
      "por qué", "razon", "paso a paso", "analiza", "lógica", "logique", "logik",
      "por que", "raciocin", "analis", "podemos concluir", "vantagens e desvantagens", "ventajas y desventajas", "prós e contras",
      "pour et contre", "decide whether", "whether to", "choose between", "escolher entre", "elegir entre", "choisir entre", "entscheiden", "possible reasons",
    ],
    cjk: ["为什么", "推理", "逻辑", "分析", "比较", "一步一步", "逐步", "なぜ", "推論", "論理", "分析", "比較", "ステップ", "理由", "考察"],
  },
  translation: {
    stems: [
      "translat", "into english", "into french", "into german", "into spanish", "into chinese", "into japanese", "in english", "in french",
      "in german", "in spanish", "traduir", "traduis", "traduc", "tradu", "en anglais", "en français", "en allemand", "übersetz", "auf deutsch",
      "auf englisch", "ins englische", "ins deutsche", "al inglés", "al español", "en inglés", "en español",
      "into portuguese", "brazilian portuguese", "para o inglês", "para o português", "em inglês", "em português", "how do you say", "how to say",
      "comment dit-on", "wie sagt man", "cómo se dice", "como se diz",
    ],
    cjk: ["翻译", "翻訳", "译成", "翻成", "英文", "中文", "日文", "英語に", "日本語に", "中国語に", "訳して", "译为", "번역", "영어로", "怎么说", "で何と言"],
  },
  summarisation: {
    stems: [
      "summar", "summaris", "tl;dr", "tldr", "key points", "main points", "in a nutshell", "condense", "recap", "brief overview", "abstract of",
      "résum", "synthès", "en bref", "zusammenfass", "fasse ", "fassen sie", "kernpunkte", "resum", "síntesis", "sintetiza", "puntos clave",
    ],
    cjk: ["总结", "摘要", "概括", "归纳", "要点", "要約", "まとめ", "概要", "要点", "总结一下"],
  },
  creative_writing: {
    stems: [
      "poem", "poetry", "story", "stories", "short story", "novel", "haiku", "lyrics", "song", "fiction", "screenplay", "character", "fairy tale",
      "limerick", "sonnet", "creative", "slogan", "write a tale", "imagine a", "poème", "histoire", "conte", "roman", "chanson", "gedicht",
      "geschichte", "märchen", "erzählung", "liedtext", "poema", "cuento", "historia", "relato", "canción", "novela",
      "dialogue", "scene", "kurzgeschichte", "crônica", "crónica", "poesia", "poesie", "conto", "história", "nouvelle",
    ],
    cjk: ["诗", "故事", "小说", "歌词", "剧本", "创作", "詩", "物語", "小説", "歌詞", "俳句", "短歌", "創作", "ストーリー", "短篇", "短編", "童话", "시를", "소설"],
  },
  classification: {
    stems: [
      "classif", "categori", "label", "sentiment", "is this spam", "which category", "positive or negative", "tag each", "sort into",
      "catégor", "étiquet", "kategori", "einordn", "stimmung", "categoría", "etiqueta", "sentimiento", "clasific",
      "spam", "intent", "which language", "what language", "quelle langue", "welche sprache", "qué idioma", "que idioma", "sentimento", "classe cet",
    ],
    // "positive or negative" in several languages, as one pattern: "positive" alone is as often mathematics.
    words: ["positi(?:ve|f|v|vo|va)[,;]?\\s+(?:or|ou|oder|o|,)\\s+n[ée]gati\\p{L}*"],
    cjk: ["分类", "归类", "哪种语言", "何語", "어느 언어", "情感", "类别", "标签", "分類", "カテゴリ", "感情分析", "ラベル", "判定"],
  },
  extraction: {
    stems: [
      "extract", "pull out", "list all", "find all", "parse", "named entit", "fields from", "key-value", "structured data", "as json",
      "into json", "into a table", "extrai", "extrae", "extraer", "relève", "liste tous", "liste toutes", "extrahier", "herausziehen", "auslesen",
      "entit", "identify the", "transcri", "extraia", "extraí",
    ],
    cjk: ["提取", "抽取", "抽出", "取り出", "列出所有", "识别", "一覧", "読み取", "書き起こ", "추출"],
  },
  vision: {
    stems: [
      "image", "picture", "photo", "screenshot", "diagram", "this chart", "in the figure", "what do you see", "describe the image", "ocr",
      "imagen", "foto", "bild", "capture d'écran", "captura", "abbildung",
    ],
    cjk: ["图片", "图像", "照片", "截图", "画像", "写真", "スクリーンショット", "図"],
  },
};

/** Characters escaped for a RegExp source, except in the few lexicon entries written as patterns (c\+\+, node\.js). */
const escape = (term: string) => term.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * At a word start: no letter or digit of an alphabet just before (the `u` flag's \b is ASCII-only, and misses "équation").
 * A Chinese, Japanese or Korean character is no word boundary's business: "用Python" names Python.
 */
const ALPHABETIC = "[\\p{Script=Latin}\\p{Script=Greek}\\p{Script=Cyrillic}\\p{N}]";
const WORD_START = `(?<!${ALPHABETIC})`;
const WORD_END = `(?!${ALPHABETIC})`;

function compile(lexicon: Lexicon): RegExp {
  const alternatives = [
    ...lexicon.stems.map((stem) => WORD_START + escape(stem)),
    ...(lexicon.words ?? []).map((word) => WORD_START + word + WORD_END),
    ...lexicon.cjk.map(escape),
  ];
  return new RegExp(alternatives.join("|"), "giu");
}

export const TAG_PATTERNS: readonly { tag: TaskTag; pattern: RegExp }[] = Object.entries(LEXICONS).map(([tag, lexicon]) => ({
  tag: tag as TaskTag,
  pattern: compile(lexicon),
}));

/** Code beyond words: fences, a line ending in `{` or `;`, arrows, keywords followed by a name and a bracket. */
export const CODE_NOTATION = /```|^\s*(?:def|class|function|import|from|#include|public|private|const|let|var|fn|func|package|SELECT|INSERT|UPDATE)\b|[{};]\s*$|=>|->|\w+\(\)|\b\w+\.\w+\(|<\/?[a-z]+>/gimu;

/** Mathematics beyond words: operators between numbers, powers, LaTeX, sets of symbols. */
export const MATH_NOTATION = /\d\s*[-+*/^=]\s*\d|\d\s*乗|\\(?:frac|int|sum|sqrt|lim|cdot|alpha|beta|pi)\b|[∫∑√∞≤≥≠±∂π∈]|\bx\^?\d|\b[a-z]\s*=\s*\d|\$[^$\n]+\$/giu;

/** Signals of a harder request: several steps, constraints, rigour. */
export const HARD_SIGNALS = new RegExp(
  [
    "step by step", "optimi[sz]e", "complexity", "edge cases?", "rigorous", "in depth", "detailed", "architecture", "concurren",
    "scal(?:e|able|ing)", "trade-?offs?", "multi-?step", "en détail", "optimis", "ausführlich", "detallad", "optimiza", "otimiz", "detalhad", "carefully", "thorough", "gründlich", "race condition", "deadlock", "memory reclam",
    "pros and cons", "pour et contre", "vor- und nachteile", "ventajas y desventajas", "vantagens e desvantagens", "long-term", "long term",
    "à long terme", "langfristig", "a largo plazo", "a longo prazo", "risks?", "risques?", "riesgos?", "riscos?", "risiken",
  ]
    .map((term) => WORD_START + term)
    .join("|") + "|详细|优化|复杂度|詳しく|最適化|計算量|长期|長期|风险|リスク|严谨|厳密",
  "giu",
);

/**
 * Signals of the hardest requests, each worth two of the above: a proof, or
 * designing a system that is hard to get right (lock-free, distributed, a compiler).
 */
export const STRONG_HARD_SIGNALS = new RegExp(
  [
    // "prove", not "proves": a request to prove, not a report that something does.
    "prove(?!s)", "proof", "démontr", "beweis", "demuestr", "demostra", "demonstr", "lock-?free", "wait-?free", "distributed",
    "consensus", "raft", "paxos", "compiler", "interpreter", "interpréteur", "intérprete", "interpretador", "design and implement",
    "from scratch", "verteilt", "distribuid", "distribué",
  ]
    .map((term) => WORD_START + term)
    .join("|") + "|证明|証明|无锁|ロックフリー|分布式|分散|并发|並行",
  "giu",
);

/**
 * Signals of a request past the trivial: mathematics beyond arithmetic (a
 * derivative, a probability, an equation to solve), a story of some length, a chart to read.
 */
export const MEDIUM_SIGNALS = new RegExp(
  [
    "derivative", "dérivée", "derivada", "ableitung", "integra", "intégra", "probabilit", "probabilidad", "wahrscheinlichkeit", "equation",
    "équation", "ecuación", "equação", "gleichung", "short story", "story", "nouvelle",
    "cuento", "conto", "crônica", "kurzgeschichte", "dialogue", "scene", "iambic", "chart", "graph", "floor plan", "grundriss", "estimate",
    "schätz", "estime", "\\d+\\s*(?:words|mots|palabras|palavras|wörter)",
  ]
    .map((term) => WORD_START + term)
    .join("|") + "|导数|积分|概率|极值|方程|微分|積分|確率|확률|短篇|短編|小説|故事|图表|グラフ|[百千]字",
  "giu",
);

/** Signals of a simple request: a greeting, a short factual question. */
export const EASY_SIGNALS = new RegExp(
  ["hi", "hello", "hey", "thanks", "thank you", "bonjour", "salut", "merci", "hallo", "danke", "hola", "gracias", "what is", "who is", "define"]
    .map((term) => WORD_START + term + WORD_END)
    .join("|") + "|你好|谢谢|こんにちは|ありがとう",
  "giu",
);

/** Chinese or Japanese characters: their text is denser (about one token per character), so length counts differently. */
export const CJK_CHARACTER = /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]/gu;

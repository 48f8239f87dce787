// How long the lexical embedding and the prompt guard take on the inputs the
// cache sees: a 200-character prompt and a 20 KB conversation. Measured, so
// printed for a person (npm run eval:cache -- --timing), never asserted.

const SHORT_PROMPT =
  "You are a helpful assistant. Please explain, with a short example in Python, how a list comprehension differs from a plain for loop, when I should not use one, and whether it is faster for 10,000 items.";
const TURN =
  "User: My Flask app returns a 500 error when I post the form twice in a row; the log says the database is locked. " +
  "Assistant: SQLite allows one writer at a time, so a second request waits and then fails after 5 seconds. Use a connection per request, " +
  "commit early, or move to PostgreSQL if several workers write at once. ";

export function conversationOf(characters: number): string {
  let text = "";
  for (let turn = 0; text.length < characters; turn++) text += `(${turn}) ${TURN}\n`;
  return text.slice(0, characters);
}

/**
 * Mean microseconds of CPU a call (user and system time of this process, so
 * that other processes on a busy machine do not count), after a warm-up, over
 * enough calls to use about 200 ms of CPU.
 */
function microsecondsPerCall(run: () => unknown): number {
  for (let i = 0; i < 200; i++) run();
  const cpu = () => {
    const { user, system } = process.cpuUsage();
    return user + system;
  };
  let calls = 0;
  const start = cpu();
  while (cpu() - start < 200_000) {
    for (let i = 0; i < 20; i++) run();
    calls += 20;
  }
  return (cpu() - start) / calls;
}

export function renderTimings(embed: (text: string) => unknown, guard: (text: string) => string): string {
  const short = SHORT_PROMPT.slice(0, 200);
  const long = conversationOf(20_000);
  const row = (name: string, text: string) =>
    `| ${name} (${text.length} characters) | ${microsecondsPerCall(() => embed(text)).toFixed(1)} µs | ${microsecondsPerCall(() => guard(text)).toFixed(1)} µs |`;
  return ["| input | embedding | guard |", "| --- | --- | --- |", row("prompt", short), row("conversation", long)].join("\n") + "\n";
}

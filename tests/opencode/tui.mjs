// opencode's terminal UI (`opencode`, no subcommand) as people run it, under tmux
// (../support/tmux.mjs), on the scripted model: one turn typed in, the screen read once the turn
// has ended. Kilo Code's TUI (tests/kilo) is the same program and goes through here too.
import { TmuxSession } from '../support/tmux.mjs';
import { loadScaled, sleep, waitFor } from '../support/world.mjs';

export const PROMPT = 'PARENT delegate the audit';
export const DONE = 'The audit is done.';

// Starts `world.binary` in the world's project in a 160x50 terminal, types PROMPT once the input
// box is drawn, and resolves to the screen once the model's final text (DONE) and the turn's end
// line ("▣  Build · Scripted 1 · 13.6s") are drawn and the session is idle. The TUI draws on the alternate screen: what
// `screen()` gives is what the user sees, the session's view scrolled to its end.
export async function tuiTurn(world, { env = {} } = {}) {
  const tui = new TmuxSession({ dir: world.dir, argv: [world.binary], cwd: world.work, env: { ...world.env(env), TERM: 'xterm-256color' } });
  try {
    await tui.waitFor(/Ask anything/, loadScaled(120_000));
    tui.type(PROMPT);
    await tui.waitFor(/┃ {2}PARENT delegate the audit/, loadScaled(20_000));
    await sleep(300);  // the input box takes the paste before Enter
    tui.key('Enter');
    await tui.waitFor(/The audit is done\./, loadScaled(180_000));
    await tui.waitFor(/▣ {2}\S+ · Scripted 1 · [\d.]+m?s/, loadScaled(30_000));
    // The session idle: the status line's busy marks ("⬝⬝⬝⬝ esc interrupt") gone.
    let screen;
    await waitFor('the session to be idle', () => !/esc interrupt/.test(screen = tui.screen()),
      { timeoutMs: loadScaled(30_000), intervalMs: 200, detail: () => screen });
    return screen;
  } finally {
    await tui.close();
  }
}

// The screen's lines for comparing two sessions: the world's directory as <world>, durations
// ("522ms", "7.9s", "1m 2s") as <time>, every other number as # (the session's date, token
// counts, throughput: "12 t/s" and "7.5 t/s" alike, "3,000" as one), runs of blanks as one (the
// sidebar's column is padded to the left column's width), blank lines dropped.
export function screenLines(screen, world) {
  return screen.replaceAll(world.dir, '<world>').split('\n')
    .map((l) => l.replace(/(?:\d+[hm] )*\d+(?:\.\d+)?(?:ms|s|m|h)\b/g, '<time>').replace(/\d+(?:[.,]\d+)*/g, '#').replace(/\s+/g, ' ').trim())
    .filter((l) => l !== '');
}

// Lines of the child's report on the screen (its findings and its verdict).
export const reportLines = (screen) => screen.split('\n').filter((l) => /finding \d{4}|VERDICT/.test(l));

// What handoff must never put on the screen: its name (the world's directory, which holds it, is
// taken out first), its hook's notes, its output's JSON, an error or a stack trace.
export const handoffNoise = /handoff|\[handoff:|[Hh]ook|Truncated|Full text|read offset|"event"|\{"|[Ee]rror|[Ee]xception|Traceback|^\s+at \S+ \(|ENOENT|EPIPE/m;
export const noiseIn = (screen, world) => handoffNoise.exec(screen.replaceAll(world.dir, '<world>'))?.[0];

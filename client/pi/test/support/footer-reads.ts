// Following a projection's footer the way a model does, for tests: the `read` calls the footer
// names (whatever their wording: every `offset=N` with its optional `limit=M` after the artifact's
// path), and the continuation Pi's `read` asks for when one call returns less than asked.
/** One `read` call: Pi's parameters. */
export interface ReadCall {
  path: string;
  offset: number;
  limit?: number;
}

/** The read calls a section's footer names; [] when it names no artifact. */
export function footerReads(result: string): ReadCall[] {
  // A result handoff's daemon did not bound ends in a line naming the private copy: the footer is before it.
  const line = result.lastIndexOf("\n\n[handoff: handoff's daemon was not reached");
  const text = line < 0 ? result : result.slice(0, line);
  const paths = [...text.matchAll(/\/[^\s"'\]]+\.txt/g)];
  const last = paths[paths.length - 1];
  if (last === undefined || last.index === undefined) return [];
  const path = last[0];
  const footer = text.slice(text.lastIndexOf("[", last.index));
  return [...footer.matchAll(/offset=(\d+)(?:[\s,]+limit=(\d+))?/g)].map((match) => ({
    path,
    offset: Number(match[1]),
    ...(match[2] === undefined ? {} : { limit: Number(match[2]) }),
  }));
}

/** A read result split into the file's lines it shows and the offset Pi says to continue at. */
export function readPage(result: string): { text: string; continueAt: number | undefined } {
  const hint = /\n\n\[[^\n]*Use offset=(\d+) to continue\.\]$/.exec(result);
  if (hint === null) return { text: result, continueAt: undefined };
  return { text: result.slice(0, hint.index), continueAt: Number(hint[1]) };
}

// Where each child's answer sits inside a text someone else wrote (pi-subagents' tool result), and
// that text with each answer replaced by its projection: everything else in it is kept as it is.
//
// Contract:
// - An answer is found verbatim, or JSON-escaped (a workflow script that returns an array or object
//   has it printed with JSON.stringify: newlines as `\n`, quotes as `\"`); a projection put where a
//   JSON-escaped answer was is escaped the same way.
// - Occurrences never overlap: longer answers claim their places first; an empty answer is never
//   found. A child whose answer does not occur is not located at all (nothing of it to bound).
// - `spliceAnswers` puts a child's projection in only where it is shorter than what it replaces,
//   (in UTF-8 bytes), so the result is never larger than the text it started from.

/** One place an answer occupies: [start, end) in UTF-16 units, and how it is written there. */
export interface Occurrence {
  start: number;
  end: number;
  form: "verbatim" | "json";
}

export interface Located<T> {
  child: T;
  occurrences: Occurrence[];
}

/** The children whose `finalText` occurs in `text`, each with every place it occupies. */
export function locateAnswers<T extends { finalText: string }>(text: string, children: readonly T[]): Located<T>[] {
  const claimed: Occurrence[] = [];
  const located: Located<T>[] = [];
  const longestFirst = [...children].sort((a, b) => b.finalText.length - a.finalText.length);
  for (const child of longestFirst) {
    if (child.finalText === "") continue;
    const occurrences: Occurrence[] = [];
    for (const form of ["verbatim", "json"] as const) {
      const needle = written(child.finalText, form);
      if (form === "json" && needle === child.finalText) continue;  // nothing to escape: found above
      for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) {
        const place = { start: at, end: at + needle.length, form };
        if (claimed.some((other) => place.start < other.end && other.start < place.end)) continue;
        claimed.push(place);
        occurrences.push(place);
      }
    }
    if (occurrences.length > 0) located.push({ child, occurrences });
  }
  return located;
}

/**
 * `text` with each located answer replaced by `projection(child)` (undefined: left as it is), in
 * the form the answer was written in, wherever that is fewer UTF-8 bytes.
 */
export function spliceAnswers<T>(text: string, located: readonly Located<T>[], projection: (child: T) => string | undefined): string {
  const edits: { start: number; end: number; text: string }[] = [];
  for (const { child, occurrences } of located) {
    const projected = projection(child);
    if (projected === undefined) continue;
    for (const place of occurrences) {
      const replacement = written(projected, place.form);
      if (Buffer.byteLength(replacement, "utf8") < Buffer.byteLength(text.slice(place.start, place.end), "utf8")) edits.push({ start: place.start, end: place.end, text: replacement });
    }
  }
  edits.sort((a, b) => a.start - b.start);
  let out = "";
  let from = 0;
  for (const edit of edits) {
    out += text.slice(from, edit.start) + edit.text;
    from = edit.end;
  }
  return out + text.slice(from);
}

function written(answer: string, form: Occurrence["form"]): string {
  return form === "verbatim" ? answer : JSON.stringify(answer).slice(1, -1);
}

// handoffd's head + tail projection (engine/text/projection.cpp, projection_cut.cpp,
// projection_notice.cpp, text_page.cpp's read_plan), for Pi's reader only, for when no handoffd
// can be had (local-bound.ts). Same cut, same marker and footer wording, same bound: the whole
// projection within `maxBytes` UTF-8 bytes and `maxLines` lines, cuts on line boundaries (inside
// a line only for a line longer than its share, never inside a UTF-8 sequence), and a footer
// whose calls read the omitted lines back uncut in Pi 1.6.0's `read` (pages of at most 2000
// lines and 51,200 bytes; a longer line in byte ranges through its `bash`).
//
// Not ported: the outline of omitted markdown headings (the daemon's cut with no heading omitted
// is the same), and the newline index (a linear scan of what a cut can show is fast enough here).
// Lines are numbered like Pi's read: text.split("\n"), 1-based.

/** Pi 1.6.0's read: most lines and bytes one call returns uncut (reader_profile.hpp's pi_reader). */
export const PAGE_LINES = 2000;
export const PAGE_BYTES = 50 * 1024;
/** Most calls a footer lists (projection_notice.hpp's max_listed_reads). */
const MAX_LISTED_READS = 8;
/** Smallest limits a cut accepts (projection_limits.hpp). */
export const MIN_PROJECTION_BYTES = 512;
export const MIN_PROJECTION_LINES = 8;
const MIN_BODY_BYTES = 32;
const MIN_BODY_LINES = 2;
const NEWLINE = 0x0a;

export interface ProjectionLimits {
  maxBytes: number;
  maxLines: number;
  /** Share of the body for the head, [0.05, 0.95] (default 0.75). */
  headShare?: number;
}

/**
 * Where the full text is, for the footer: `path` holds exactly the text. `cli`: the `handoff`
 * executable its byte-range and plan commands run, as handoffd's footers name it; undefined: the
 * footer names `tail -c | head -c` ranges and Pi's own read pages instead (no handoff needed).
 */
export interface SavedText {
  path: string;
  cli?: string | undefined;
}

export interface Projection {
  text: string;
  truncated: boolean;
  totalBytes: number;
  totalLines: number;
  /** First omitted line (1-based) and how many, when truncated. */
  omittedFirst: number;
  omittedCount: number;
}

/** A text's UTF-8 bytes and lines (count of "\n" + 1). */
export function shapeOf(text: Buffer): { bytes: number; lines: number } {
  let lines = 1;
  for (let at = text.indexOf(NEWLINE); at >= 0; at = text.indexOf(NEWLINE, at + 1)) lines += 1;
  return { bytes: text.length, lines };
}

/** 36997 -> "36,997". */
export function grouped(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

function isContinuation(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

/** The largest character boundary <= at. */
function utf8Floor(text: Buffer, at: number): number {
  let pos = Math.min(at, text.length);
  while (pos > 0 && pos < text.length && isContinuation(text[pos])) pos -= 1;
  return pos;
}

/** The smallest character boundary >= at. */
function utf8Ceil(text: Buffer, at: number): number {
  let pos = at;
  while (pos < text.length && isContinuation(text[pos])) pos += 1;
  return pos;
}

/** The first "\n" of text[pos, pos + window), or -1. */
function nextNewline(text: Buffer, pos: number, window: number): number {
  const at = text.subarray(pos, pos + window).indexOf(NEWLINE);
  return at < 0 ? -1 : pos + at;
}

/** The last "\n" of text[end - window, end), or -1. */
function lastNewline(text: Buffer, end: number, window: number): number {
  const at = text.subarray(end - window, end).lastIndexOf(NEWLINE);
  return at < 0 ? -1 : end - window + at;
}

interface BodyCut {
  headEnd: number;
  headLines: number;
  headPartial: boolean;
  tailStart: number;
  tailLines: number;
  tailPartial: boolean;
}

/** projection_cut.cpp's cutter: whole lines from each side, then a partial line where one is too long. */
class Cutter {
  readonly cut: BodyCut;
  private readonly freeFinal: boolean;

  constructor(
    private readonly text: Buffer,
    private readonly totalLines: number,
  ) {
    this.cut = { headEnd: 0, headLines: 0, headPartial: false, tailStart: text.length, tailLines: 0, tailPartial: false };
    // The empty line after a final "\n" is the tail's first, and free.
    this.freeFinal = text.length > 0 && text[text.length - 1] === NEWLINE;
    if (this.freeFinal && this.wholeLineFree()) this.cut.tailLines = 1;
  }

  headBytes(): number {
    return this.cut.headEnd + (this.cut.headPartial ? 1 : 0);
  }
  headLines(): number {
    return this.cut.headLines + (this.cut.headPartial ? 1 : 0);
  }
  tailLines(): number {
    return this.cut.tailLines + (this.cut.tailPartial ? 1 : 0) - (this.freeFinal ? 1 : 0);
  }
  tailBytes(): number {
    if (this.cut.tailLines + (this.cut.tailPartial ? 1 : 0) === 0) return 0;
    return this.text.length - this.cut.tailStart + (this.freeFinal ? 0 : 1);
  }

  takeHeadLines(maxBytes: number, maxLines: number): void {
    const c = this.cut;
    while (!c.headPartial && this.wholeLineFree() && this.headLines() < maxLines && this.headBytes() < maxBytes) {
      const room = maxBytes - this.headBytes();
      const newline = nextNewline(this.text, c.headEnd, Math.min(room, this.text.length - c.headEnd));
      if (newline < 0) return;
      c.headEnd = newline + 1;
      c.headLines += 1;
    }
  }

  takeTailLines(maxBytes: number, maxLines: number): void {
    const c = this.cut;
    while (!c.tailPartial && this.wholeLineFree() && this.tailLines() < maxLines && this.tailBytes() < maxBytes) {
      const room = maxBytes - this.tailBytes();
      const end = this.tailLineEnd();
      const newline = lastNewline(this.text, end, Math.min(room, end));
      if (newline < 0) return;
      c.tailStart = newline + 1;
      c.tailLines += 1;
    }
  }

  headLineLongerThan(share: number): boolean {
    const pos = this.cut.headEnd;
    if (this.cut.headPartial || this.text.length - pos < share) return false;
    return nextNewline(this.text, pos, share) < 0;
  }

  tailLineLongerThan(share: number): boolean {
    const end = this.tailLineEnd();
    if (this.cut.tailPartial || end < share) return false;
    return lastNewline(this.text, end, share) < 0;
  }

  takeHeadPart(room: number): void {
    const c = this.cut;
    if (room < 2 || c.headPartial) return;
    const pos = c.headEnd;
    let limit = Math.min(pos + (room - 1), c.tailStart);
    const newline = nextNewline(this.text, pos, limit - pos);
    if (newline >= 0) limit = newline;
    const end = utf8Floor(this.text, limit);
    if (end <= pos) return;
    c.headEnd = end;
    c.headPartial = true;
  }

  takeTailPart(room: number): void {
    const c = this.cut;
    if (room < 2 || c.tailPartial) return;
    const end = this.tailLineEnd();
    let limit = Math.max(end - Math.min(end, room - 1), c.headEnd);
    const newline = lastNewline(this.text, end, end - limit);
    if (newline >= 0) limit = newline + 1;
    const start = utf8Ceil(this.text, limit);
    if (start >= end) return;
    c.tailStart = start;
    c.tailPartial = true;
  }

  /** A whole line may be taken only while one line still lies between the head and the tail. */
  private wholeLineFree(): boolean {
    return this.cut.headLines + 1 < this.totalLines - this.cut.tailLines;
  }

  private tailLineEnd(): number {
    return this.cut.tailLines === 0 ? this.text.length : this.cut.tailStart - 1;
  }
}

function cutBody(text: Buffer, totalLines: number, budget: { bytes: number; lines: number }, headShare: number): BodyCut {
  const headShareBytes = Math.floor(budget.bytes * headShare);
  const tailShareBytes = budget.bytes - headShareBytes;
  const headShareLines = Math.min(Math.max(Math.round(budget.lines * headShare), 1), budget.lines - 1);
  const c = new Cutter(text, totalLines);
  c.takeHeadLines(headShareBytes, headShareLines);
  c.takeTailLines(budget.bytes - c.headBytes(), budget.lines - c.headLines());
  c.takeHeadLines(budget.bytes - c.tailBytes(), budget.lines - c.tailLines());
  const linesLeft = budget.lines - c.headLines() - c.tailLines();
  if (linesLeft === 0) return c.cut;
  const headWantsPart = c.headLineLongerThan(headShareBytes);
  const tailWantsPart = c.tailLineLongerThan(tailShareBytes);
  if (headWantsPart) {
    const room = budget.bytes - c.headBytes() - c.tailBytes();
    const both = tailWantsPart && linesLeft >= 2;
    c.takeHeadPart(both ? Math.min(room, Math.max(headShareBytes - c.headBytes(), 0)) : room);
  }
  if (tailWantsPart && c.headLines() + c.tailLines() < budget.lines) c.takeTailPart(budget.bytes - c.headBytes() - c.tailBytes());
  return c.cut;
}

// ---- read calls (text_page.cpp's read_plan) -----------------------------------------------------

/** One call: Pi `read` of lines firstLine..lastLine, or (`bytes`) the byte range [firstByte, endByte) of a long line. */
interface ReadStep {
  firstLine: number;
  lastLine: number;
  bytes: boolean;
  firstByte: number;
  endByte: number;
}

/** End of the line starting at `start` when it is at most maxBytes long, else -1. */
function endWithin(text: Buffer, start: number, maxBytes: number): number {
  const left = text.length - Math.min(start, text.length);
  const window = Math.min(left, maxBytes + 1);
  if (window > 0) {
    const newline = nextNewline(text, start, window);
    if (newline >= 0) return newline;
  }
  return left <= maxBytes ? text.length : -1;
}

/** The calls that read lines firstLine..lastLine (line firstLine starts at firstByte) back uncut: greedy pages. */
function* readPlan(text: Buffer, firstLine: number, firstByte: number, lastLine: number): Generator<ReadStep> {
  let line = firstLine;
  let pos = firstByte;
  let inLongLine = false;
  for (;;) {
    if (!inLongLine) {
      if (line > lastLine) return;
      const end = endWithin(text, pos, PAGE_BYTES);
      if (end < 0) {
        inLongLine = true;
      } else {
        const step: ReadStep = { firstLine: line, lastLine: line, bytes: false, firstByte: pos, endByte: end };
        let cost = end - pos;
        for (let lines = 1; step.lastLine < lastLine && lines < PAGE_LINES; lines += 1) {
          if (cost + 1 > PAGE_BYTES) break;
          const stop = endWithin(text, step.endByte + 1, PAGE_BYTES - cost - 1);
          if (stop < 0) break;
          cost += 1 + (stop - (step.endByte + 1));
          step.lastLine += 1;
          step.endByte = stop;
        }
        line = step.lastLine + 1;
        pos = step.endByte + 1;
        yield step;
        continue;
      }
    }
    const step: ReadStep = { firstLine: line, lastLine: line, bytes: true, firstByte: pos, endByte: endWithin(text, pos, PAGE_BYTES) };
    if (step.endByte < 0) {
      step.endByte = utf8Floor(text, pos + PAGE_BYTES);
      if (step.endByte <= pos) step.endByte = pos + PAGE_BYTES;
      pos = step.endByte;
    } else {
      inLongLine = false;
      line += 1;
      pos = step.endByte + 1;
    }
    yield step;
  }
}

// ---- the notices (projection_notice.cpp) ----------------------------------------------------------

interface Span {
  first: number;
  last: number;
}

interface NoticeNumbers {
  total: { bytes: number; lines: number };
  head: Span | undefined;
  headPartLine: number;
  tailPartLine: number;
  tail: Span | undefined;
  omitted: Span;
  omittedBytes: number;
  reads: ReadStep[];
}

interface FooterRoom {
  listedReads: number;
  byteRanges: boolean;
  planCommand: boolean;
}

/** `path` as one shell word. */
export function shellWord(path: string): string {
  return `'${path.replaceAll("'", "'\\''")}'`;
}

function span(s: Span): string {
  return s.first === s.last ? `line ${s.first}` : `lines ${s.first}-${s.last}`;
}

function bytesText(n: number): string {
  return `${grouped(n)} ${n === 1 ? "byte" : "bytes"}`;
}

function marker(n: NoticeNumbers): string {
  return `[... middle omitted: ${span(n.omitted)} of ${n.total.lines}, ${bytesText(n.omittedBytes)} ...]`;
}

function summary(n: NoticeNumbers): string {
  const shown: string[] = [];
  if (n.head !== undefined) shown.push(span(n.head));
  if (n.headPartLine !== 0) shown.push(`start of line ${n.headPartLine}`);
  if (n.tailPartLine !== 0) shown.push(`end of line ${n.tailPartLine}`);
  if (n.tail !== undefined) shown.push(span(n.tail));
  const lines = `${n.total.lines} ${n.total.lines === 1 ? "line" : "lines"}`;
  return `[Truncated: ${bytesText(n.total.bytes)} / ${lines} in full; shown: ${shown.length === 0 ? "nothing" : shown.join(", ")}.\n`;
}

function readCall(step: ReadStep, saved: SavedText): string {
  if (!step.bytes) return `read offset=${step.firstLine} limit=${step.lastLine - step.firstLine + 1}`;
  if (saved.cli !== undefined) return `bash \`${shellWord(saved.cli)} read --bytes ${step.firstByte}-${step.endByte} ${shellWord(saved.path)}\``;
  return `bash \`tail -c +${step.firstByte + 1} ${shellWord(saved.path)} | head -c ${step.endByte - step.firstByte}\``;
}

function access(n: NoticeNumbers, saved: SavedText): string {
  if (n.reads.length === 0) {
    if (saved.cli !== undefined)
      return (
        `Full text saved; bash \`${shellWord(saved.cli)} read --plan ${n.omitted.first}-${n.omitted.last} ${shellWord(saved.path)}\`` +
        ` lists the calls that read the omitted ${span(n.omitted)} back, each shown whole.]`
      );
    // No handoff to list the calls: Pi's read pages them itself, each naming where the next starts.
    return (
      `Full text: ${saved.path} \u2014 omitted ${span(n.omitted)}: read offset=${n.omitted.first}, then at the offset each page names,` +
      ` up to line ${n.omitted.last}.]`
    );
  }
  const calls = n.reads.map((step) => readCall(step, saved)).join("; ");
  return `Full text: ${saved.path} \u2014 omitted ${span(n.omitted)} in ${n.reads.length} ${n.reads.length === 1 ? "call" : "calls"}, each shown whole: ${calls}.]`;
}

function footer(n: NoticeNumbers, saved: SavedText): string {
  return summary(n) + access(n, saved);
}

/** The largest number with as many digits as n (999 for 422). */
function widest(n: number): number {
  return 10 ** Math.max(String(n).length, 1) - 1;
}

function linesIn(text: string): number {
  let lines = 1;
  for (const ch of text) if (ch === "\n") lines += 1;
  return lines;
}

/** An upper bound on the marker and footer of any cut of a text of this shape (notice_bound). */
function noticeBound(total: { bytes: number; lines: number }, saved: SavedText, room: FooterRoom): { bytes: number; lines: number } {
  const line = widest(total.lines);
  const worst: NoticeNumbers = {
    total,
    head: { first: 1, last: line },
    headPartLine: line,
    tailPartLine: line,
    tail: { first: line - 1, last: line },
    omitted: { first: line - 1, last: line },
    omittedBytes: widest(total.bytes),
    reads: [],
  };
  const common = `${marker(worst)}\n${summary(worst)}`;
  const measure = (n: NoticeNumbers): { bytes: number; lines: number } => {
    const text = common + access(n, saved);
    return { bytes: Buffer.byteLength(text), lines: linesIn(text) };
  };
  let bound = room.planCommand ? measure(worst) : { bytes: 0, lines: 0 };
  if (room.listedReads > 0) {
    const byte = widest(total.bytes);
    const limit = widest(Math.min(total.lines, PAGE_LINES));
    const widestRead: ReadStep = room.byteRanges
      ? { firstLine: line, lastLine: line, bytes: true, firstByte: byte, endByte: saved.cli === undefined ? byte + 99_999 : byte }
      : { firstLine: line, lastLine: line + limit - 1, bytes: false, firstByte: 0, endByte: 0 };
    const listed = measure({ ...worst, reads: Array.from({ length: room.listedReads }, () => widestRead) });
    // endByte: the `handoff read --bytes` form prints it (as handoffd reserves it); the
    // `tail -c | head -c` form prints its length instead, which this makes wider than any page.
    bound = { bytes: Math.max(bound.bytes, listed.bytes), lines: Math.max(bound.lines, listed.lines) };
  }
  return bound;
}

function readStepsBound(total: { bytes: number; lines: number }): number {
  return 3 * Math.floor(total.bytes / (PAGE_BYTES - 3)) + 2 * Math.floor(total.lines / (PAGE_LINES + 1)) + 1;
}

function footerRoomFor(total: { bytes: number; lines: number }, maxBytes: number, saved: SavedText): { room: FooterRoom; notices: { bytes: number; lines: number } } {
  const longLines = Math.floor(total.bytes / total.lines) > PAGE_BYTES;
  const room: FooterRoom = { listedReads: Math.min(readStepsBound(total), MAX_LISTED_READS), byteRanges: longLines, planCommand: true };
  let notices = noticeBound(total, saved, room);
  let most: number | undefined;
  while (room.listedReads > 0 && notices.bytes > Math.floor(maxBytes / 8)) {
    most ??= Math.max(noticeBound(total, saved, { listedReads: 0, byteRanges: false, planCommand: true }).bytes, Math.floor(maxBytes / 8));
    if (notices.bytes <= most) break;
    room.listedReads -= 1;
    notices = noticeBound(total, saved, room);
  }
  return { room, notices };
}

/** The least max_bytes a cut of a text of this shape can have (min_cut_bytes). */
export function minCutBytes(total: { bytes: number; lines: number }, saved: SavedText): number {
  return Math.max(MIN_PROJECTION_BYTES, footerRoomFor(total, 0, saved).notices.bytes + MIN_BODY_BYTES);
}

function omittedReads(text: Buffer, cut: BodyCut, lastOmitted: number, room: FooterRoom): ReadStep[] {
  if (cut.tailStart - cut.headEnd > room.listedReads * (PAGE_BYTES + 1)) return [];
  let firstByte = cut.headEnd;
  if (cut.headPartial) firstByte = cut.headEnd === 0 ? 0 : text.subarray(0, cut.headEnd).lastIndexOf(NEWLINE) + 1;
  const reads: ReadStep[] = [];
  for (const step of readPlan(text, cut.headLines + 1, firstByte, lastOmitted)) {
    if (reads.length === room.listedReads) return [];
    reads.push(step);
  }
  return reads;
}

/**
 * Projects `text`: itself when it fits both limits, else head + marker + tail + footer naming
 * `saved`. Throws when a cut is needed and the limits cannot hold the marker and footer.
 */
export function project(text: Buffer, limits: ProjectionLimits, saved: SavedText): Projection {
  const total = shapeOf(text);
  if (total.bytes <= limits.maxBytes && total.lines <= limits.maxLines)
    return { text: text.toString("utf8"), truncated: false, totalBytes: total.bytes, totalLines: total.lines, omittedFirst: 0, omittedCount: 0 };
  if (limits.maxBytes < MIN_PROJECTION_BYTES || limits.maxLines < MIN_PROJECTION_LINES)
    throw new RangeError(`projection limits of ${limits.maxBytes} bytes / ${limits.maxLines} lines are below the minimum`);
  const { room, notices } = footerRoomFor(total, limits.maxBytes, saved);
  if (limits.maxBytes < notices.bytes + MIN_BODY_BYTES || limits.maxLines < notices.lines + MIN_BODY_LINES)
    throw new RangeError(`projection limits of ${limits.maxBytes} bytes leave no room for text beside the ${notices.bytes}-byte marker and footer`);
  const cut = cutBody(text, total.lines, { bytes: limits.maxBytes - notices.bytes, lines: limits.maxLines - notices.lines }, limits.headShare ?? 0.75);
  const lastOmitted = total.lines - cut.tailLines;
  const numbers: NoticeNumbers = {
    total,
    head: cut.headLines > 0 ? { first: 1, last: cut.headLines } : undefined,
    headPartLine: cut.headPartial ? cut.headLines + 1 : 0,
    tailPartLine: cut.tailPartial ? lastOmitted : 0,
    tail: cut.tailLines > 0 ? { first: lastOmitted + 1, last: total.lines } : undefined,
    omitted: { first: cut.headLines + 1, last: lastOmitted },
    omittedBytes: cut.tailStart - cut.headEnd,
    reads: [],
  };
  numbers.reads = omittedReads(text, cut, lastOmitted, room);
  const parts: Buffer[] = [text.subarray(0, cut.headEnd)];
  if (cut.headPartial) parts.push(Buffer.from("\n"));
  parts.push(Buffer.from(`${marker(numbers)}\n`));
  if (cut.tailLines > 0 || cut.tailPartial) {
    parts.push(text.subarray(cut.tailStart));
    if (text[text.length - 1] !== NEWLINE) parts.push(Buffer.from("\n"));
  }
  const body = Buffer.concat(parts);
  let end = footer(numbers, saved);
  if (body.length + Buffer.byteLength(end) > limits.maxBytes) {
    numbers.reads = [];
    end = footer(numbers, saved);
  }
  const out = body.toString("utf8") + end;
  if (Buffer.byteLength(out) > limits.maxBytes || linesIn(out) > limits.maxLines) throw new Error("local projection over its limits (a bug)");
  return {
    text: out,
    truncated: true,
    totalBytes: total.bytes,
    totalLines: total.lines,
    omittedFirst: cut.headLines + 1,
    omittedCount: total.lines - cut.tailLines - cut.headLines,
  };
}

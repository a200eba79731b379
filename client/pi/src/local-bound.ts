// What subagent_wait returns when no handoffd can be reached or started (docs/design.md §13, "When
// handoffd is unavailable the verdict survives"): the TypeScript twin of the hook core's
// client/cli/harness/core/local_bound.{hpp,cpp}, for Pi.
//
// Each finished result still reaches the parent with its head AND its tail, cut here by the
// engine's projection (local-projection.ts) within the caps handoffd uses for a wait read by Pi
// (16 KiB per result, 48 KiB per batch, floor 512 B, 600 lines; shared by the results of one
// wait as handoffd shares them), then one line saying handoffd did not bound it and where the
// full text is:
//
//   [handoff: handoff's daemon was not reached (WHY); the head and tail above were cut by the hook
//   itself, the full text (N bytes) is in PATH]
//
// PATH is a private copy, ${XDG_CACHE_HOME:-~/.cache}/handoff/unbounded/<sha256>.txt: mode 0600
// in a 0700 directory of the user's, published by a rename, never through a symlink at the
// directory or the file. The artifact store stays handoffd's alone: these copies are beside it,
// never in it, and handoffd never reads, lists, serves or collects them. A result that fits
// passes whole, with "[handoff: WHY; the result passes whole]".
//
// Never throws: a result whose copy cannot be written is not shown cut without it; it is kept
// (the caller leaves it undelivered) and the batch says why.
import { createHash, randomBytes } from "node:crypto";
import { closeSync, constants, existsSync, fchmodSync, fstatSync, fsyncSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { MIN_PROJECTION_BYTES, MIN_PROJECTION_LINES, grouped, minCutBytes, project, shapeOf, type SavedText } from "./local-projection.js";
import type { Budget, ResultStatus, Section } from "./protocol.js";

/** A surface's static caps (budget.hpp's surface_caps), UTF-8 bytes and lines. */
export interface SurfaceCaps {
  perResultBytes: number;
  perBatchBytes: number;
  floorBytes: number;
  maxLines: number;
}
/** subagent/wait's caps for Pi's reader (surface_caps::wait(); Pi frames nothing). */
export const WAIT_CAPS: SurfaceCaps = { perResultBytes: 16 * 1024, perBatchBytes: 48 * 1024, floorBytes: 512, maxLines: 600 };
/** Auto-delivery's caps when the parent goes idle (surface_caps::auto_delivery()). */
export const AUTO_CAPS: SurfaceCaps = { perResultBytes: 24 * 1024, perBatchBytes: 48 * 1024, floorBytes: 2 * 1024, maxLines: 600 };

/** Between two sections, as handoffd (and OpenPI) join them. */
const SEPARATOR = "\n\n---\n\n";
/** Most bytes of the reason the one line prints (local_bound.cpp), and of each part of it. */
const MAX_LINE_REASON_BYTES = 512;
const MAX_PART_BYTES = 160;

/** One finished result to show. */
export interface LocalInput {
  childId: string;
  title: string;
  status: ResultStatus;
  error?: string | undefined;
  finalText: string;
}

export interface LocalBatchOptions {
  /** Why no handoffd bounded it (the connection error's message). */
  reason: string;
  /** Where the private copies go (default: unboundedDir()); undefined there: none can be written. */
  dir?: string | undefined;
  /** The `handoff` CLI the footers' byte-range and plan commands run (default: handoffCli()). */
  cli?: string | undefined;
  /** Default WAIT_CAPS (a subagent_wait); AUTO_CAPS for a delivery when the parent is idle. */
  caps?: SurfaceCaps;
}

/** A wait's answer (protocol's WaitResult shape), and which results it showed. */
export interface LocalBatch {
  sections: Section[];
  text: string;
  deferred: number;
  budget: Budget;
  /** Shown whole or cut with their full text in a private copy: delivered. */
  delivered: string[];
  /** Held back (the batch was full) or not shown (no copy could be written): still to deliver. */
  kept: string[];
}

/** ${XDG_CACHE_HOME:-$HOME/.cache}/handoff/unbounded (an XDG_CACHE_HOME that is not absolute is ignored); undefined without either. */
export function unboundedDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const cache = env["XDG_CACHE_HOME"];
  const home = env["HOME"];
  const base = cache !== undefined && isAbsolute(cache) ? cache : home !== undefined && isAbsolute(home) ? join(home, ".cache") : undefined;
  return base === undefined ? undefined : join(base, "handoff", "unbounded");
}

/** The `handoff` CLI of this install (PREFIX/bin, the checkout's build, PATH), or undefined. */
export function handoffCli(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
  const candidates = [
    resolve(packageRoot, "../../../bin/handoff"),
    resolve(packageRoot, "../../build/client/handoff"),
    ...(env["PATH"] ?? "").split(delimiter).filter((dir) => isAbsolute(dir)).map((dir) => join(dir, "handoff")),
  ];
  return candidates.find((path) => {
    try {
      return fstatLike(path);
    } catch {
      return false;
    }
  });
}

function fstatLike(path: string): boolean {
  const fd = openSync(path, constants.O_RDONLY);
  try {
    const stat = fstatSync(fd);
    return stat.isFile() && (stat.mode & 0o111) !== 0;
  } finally {
    closeSync(fd);
  }
}

/** `why` as one line: control characters as spaces, at most `most` bytes (cut on a character, "..." added). */
export function oneLine(why: string, most = MAX_PART_BYTES): string {
  const flat = why.replace(/[\u0000-\u001f\u007f]/g, " ");
  const bytes = Buffer.from(flat);
  if (bytes.length <= most) return flat;
  let cut = Math.max(most - 3, 0);
  while (cut > 0 && ((bytes[cut] ?? 0) & 0xc0) === 0x80) cut -= 1;
  return `${bytes.subarray(0, cut).toString("utf8")}...`;
}

/** "handoff's daemon was not reached (REASON)" (bound_child.cpp's why_not_bounded). */
export function whyNotReached(reason: string): string {
  return `handoff's daemon was not reached (${oneLine(reason)})`;
}

/** The one line after a cut result (local_bound.cpp's local_head_tail). */
export function cutLine(why: string, totalBytes: number, path: string): string {
  return `[handoff: ${oneLine(why, MAX_LINE_REASON_BYTES)}; the head and tail above were cut by the hook itself, the full text (${grouped(totalBytes)} bytes) is in ${path}]`;
}

/** The one line after a result that fits (local_bound.cpp's passes_whole_line). */
export function passesWholeLine(why: string): string {
  return `[handoff: ${oneLine(why, MAX_LINE_REASON_BYTES)}; the result passes whole]`;
}

/** The line for a result too long to show whole whose copy could not be written: kept, not shown. */
function keptLine(why: string, totalBytes: number, error: string): string {
  return (
    `[handoff: ${oneLine(why, MAX_LINE_REASON_BYTES)}; this result (${grouped(totalBytes)} bytes) is too long to show whole and no private copy ` +
    `of it could be written (${oneLine(error)}): it stays with this session and comes with a later subagent_wait or delivery]`
  );
}

/**
 * Writes `text` as <dir>/<sha256>.txt: 0600 in a 0700 directory of ours (created where missing),
 * published by a rename, never through a symlink at the directory or the file. Returns its path;
 * throws an Error saying what is wrong.
 */
export function writePrivateCopy(dir: string, text: Buffer, sha256 = sha256Hex(text)): string {
  if (!isAbsolute(dir)) throw new Error("no directory for a private copy (HOME is not set)");
  // Existing ancestors are traversed as they are (~/.cache may be a link the user made); the
  // directory itself is opened without following a link and must be ours and private.
  mkdirSync(dirname(dir), { recursive: true, mode: 0o700 });
  let created = false;
  try {
    mkdirSync(dir, { mode: 0o700 });
    created = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  let dirFd: number;
  try {
    dirFd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "ENOTDIR") throw new Error(`private copy dir ${dir} is not a directory (a symlink?); remove it`);
    throw error;
  }
  try {
    const stat = fstatSync(dirFd);
    if (created) fchmodSync(dirFd, 0o700);
    else if (stat.uid !== process.getuid?.() || (stat.mode & 0o077) !== 0)
      throw new Error(`private copy dir ${dir} is not private to this user (owner ${stat.uid}, mode ${(stat.mode & 0o777).toString(8)}); chmod 700 it or remove it`);
    // Names resolved through the open directory (Linux's /proc/self/fd), as openat would: a
    // directory swapped for a link after the checks is not followed.
    const viaFd = `/proc/self/fd/${dirFd}`;
    const base = existsSync(viaFd) ? viaFd : dir;
    const name = `${sha256}.txt`;
    const temp = `.${name}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
    const fd = openSync(join(base, temp), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      for (let at = 0; at < text.length; ) at += writeSync(fd, text, at, text.length - at);
      fsyncSync(fd);
    } catch (error) {
      closeSync(fd);
      unlinkSync(join(base, temp));
      throw error;
    }
    closeSync(fd);
    // A rename over the name never follows what is there; the content is the text's.
    renameSync(join(base, temp), join(base, name));
    fsyncSync(dirFd);
    return join(dir, name);
  } finally {
    closeSync(dirFd);
  }
}

export function sha256Hex(text: Buffer): string {
  return createHash("sha256").update(text).digest("hex");
}

/** A header-safe string: every character that starts a new line for a reader becomes a space. */
function headerSafe(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f\u0085\u2028\u2029]/g, " ");
}

/** `Subagent ID "TITLE" finished.` (or failed., with its Error: line), then a blank line (batch.cpp's section_header). */
function sectionHeader(input: LocalInput): string {
  let out = `Subagent ${headerSafe(input.childId)}`;
  if (input.title !== "") out += ` "${headerSafe(input.title)}"`;
  out += input.status === "done" ? " finished." : input.status === "error" ? " failed." : " was cancelled.";
  if (input.error !== undefined && input.error !== "") out += `\nError: ${input.error}`;
  return `${out}\n\n`;
}

function deferredNotice(count: number): string {
  return `${SEPARATOR}[${count}${count === 1 ? " more subagent result is waiting; it will" : " more subagent results are waiting; they will"} be delivered in the next batch.]`;
}

/** budget.cpp's water_fill: results that fit get what they need, the others share the rest equally. */
function waterFill(needs: number[], body: number): number[] {
  const order = needs.map((_, i) => i).sort((a, b) => (needs[a] as number) - (needs[b] as number) || a - b);
  const limits = needs.map(() => 0);
  let remaining = body;
  for (let k = 0; k < order.length; k += 1) {
    const fair = Math.floor(remaining / (order.length - k));
    const i = order[k] as number;
    if ((needs[i] as number) <= fair) {
      limits[i] = needs[i] as number;
      remaining -= needs[i] as number;
      continue;
    }
    for (let j = k; j < order.length; j += 1) limits[order[j] as number] = fair;
    break;
  }
  return limits;
}

interface Planned {
  input: LocalInput;
  text: Buffer;
  shape: { bytes: number; lines: number };
  sha256: string;
  header: string;
  /** Bytes around its projection: separator, header, "\n\n" and the one line. */
  wrapper: number;
  /** Its projection's byte limit at most: the per-result cap less its line. */
  cap: number;
  need: number;
  minCut: number;
}

/**
 * The results of one wait (or delivery), bounded here: each within its share of the caps, the whole
 * text within the batch cap; those that do not fit the batch at their floor are held back
 * (`kept`), in order. Never throws.
 */
export function localBatch(inputs: LocalInput[], options: LocalBatchOptions): LocalBatch {
  try {
    return batchOf(inputs, options);
  } catch (error) {
    // A bug here must not become Pi's error: every result stays with the session, and the text says why.
    const why = whyNotReached(options.reason);
    const caps = options.caps ?? WAIT_CAPS;
    return {
      sections: [],
      text: `[handoff: ${oneLine(why, MAX_LINE_REASON_BYTES)}; the results could not be bounded here (${oneLine(String(error))}): they stay with this session]`,
      deferred: 0,
      budget: { mode: "static", basis: `static: ${why}`, batchCapBytes: caps.perBatchBytes, staticBatchBytes: caps.perBatchBytes, perResultBytes: caps.perResultBytes, floorBytes: caps.floorBytes, maxLines: caps.maxLines, usage: null, headroomBytes: null },
      delivered: [],
      kept: inputs.map((input) => input.childId),
    };
  }
}

function batchOf(inputs: LocalInput[], options: LocalBatchOptions): LocalBatch {
  const why = whyNotReached(options.reason);
  const dir = "dir" in options ? options.dir : unboundedDir();
  const cli = "cli" in options ? options.cli : handoffCli();
  const caps = options.caps ?? WAIT_CAPS;
  const projectionLines = caps.maxLines - 2;  // the blank line and the one line
  const planned: Planned[] = inputs.map((input, i) => {
    const text = Buffer.from(input.finalText);
    const shape = shapeOf(text);
    const sha256 = sha256Hex(text);
    const header = sectionHeader(input);
    const path = dir === undefined ? "/" : join(dir, `${sha256}.txt`);
    const mayBeCut = shape.bytes > caps.floorBytes || shape.lines > projectionLines;
    const line = mayBeCut ? cutLine(why, shape.bytes, path) : passesWholeLine(why);
    const lineRoom = 2 + Buffer.byteLength(line);
    const cap = Math.max(caps.perResultBytes - lineRoom, MIN_PROJECTION_BYTES);
    const fits = shape.bytes <= cap && shape.lines <= projectionLines;
    const saved: SavedText = { path, cli };
    return {
      input,
      text,
      shape,
      sha256,
      header,
      wrapper: (i === 0 ? 0 : SEPARATOR.length) + Buffer.byteLength(header) + lineRoom,
      cap,
      need: fits ? shape.bytes : cap,
      minCut: mayBeCut ? minCutBytes(shape, saved) : 0,
    };
  });
  const floor = Math.max(caps.floorBytes, ...planned.map((p) => Math.min(p.minCut, p.cap)));
  const notice = inputs.length < 2 ? 0 : Math.max(Buffer.byteLength(deferredNotice(1)), Buffer.byteLength(deferredNotice(inputs.length - 1)));
  const minCosts = planned.map((p) => p.wrapper + Math.min(p.need, floor));
  let batchCap: number = caps.perBatchBytes;
  let admitted = planned.length;
  if (minCosts.reduce((sum, cost) => sum + cost, 0) > batchCap) {
    let used = 0;
    admitted = 0;
    while (admitted < planned.length && used + (minCosts[admitted] as number) + notice <= batchCap) used += minCosts[admitted++] as number;
    // The first always goes out, under a cap raised for it if need be.
    if (admitted === 0) {
      admitted = 1;
      batchCap = Math.max(batchCap, (minCosts[0] as number) + (planned.length > 1 ? notice : 0));
    }
  }
  const deferring = admitted < planned.length;
  let body = batchCap - (deferring ? notice : 0);
  for (const p of planned.slice(0, admitted)) body -= p.wrapper;
  const limits = waterFill(planned.slice(0, admitted).map((p) => p.need), body);

  const sections: Section[] = [];
  const delivered: string[] = [];
  const kept: string[] = planned.slice(admitted).map((p) => p.input.childId);
  let text = "";
  planned.slice(0, admitted).forEach((p, k) => {
    const limit = Math.max(limits[k] as number, Math.min(floor, p.cap));
    let shown: string;
    let section: Section;
    const base = { childId: p.input.childId, title: p.input.title, status: p.input.status, totalBytes: p.shape.bytes, totalLines: p.shape.lines };
    const withError = p.input.error !== undefined && p.input.error !== "" ? { error: p.input.error } : {};
    try {
      if (p.shape.bytes <= limit && p.shape.lines <= projectionLines) {
        shown = `${p.input.finalText}\n\n${passesWholeLine(why)}`;
        section = { ...base, ...withError, text: shown, truncated: false, omitted: null, artifact: null };
      } else {
        if (dir === undefined) throw new Error("no directory for a private copy (neither XDG_CACHE_HOME nor HOME is set)");
        const path = writePrivateCopy(dir, p.text, p.sha256);
        const cut = project(p.text, { maxBytes: Math.max(limit, MIN_PROJECTION_BYTES), maxLines: Math.max(projectionLines, MIN_PROJECTION_LINES) }, { path, cli });
        shown = `${cut.text}\n\n${cutLine(why, p.shape.bytes, path)}`;
        section = {
          ...base,
          ...withError,
          text: shown,
          truncated: true,
          omitted: { offset: cut.omittedFirst, limit: cut.omittedCount },
          artifact: { saved: true, path, sha256: p.sha256 },
        };
      }
      delivered.push(p.input.childId);
    } catch (error) {
      shown = keptLine(why, p.shape.bytes, error instanceof Error ? error.message : String(error));
      section = { ...base, ...withError, text: shown, truncated: true, omitted: null, artifact: { saved: false, sha256: p.sha256, reason: oneLine(String(error)) } };
      kept.push(p.input.childId);
    }
    if (text !== "") text += SEPARATOR;
    text += p.header + shown;
    sections.push(section);
  });
  const deferred = planned.length - admitted;
  if (deferred > 0) text += deferredNotice(deferred);
  const budget: Budget = {
    mode: "static",
    basis: `static: ${why}; caps applied by the Pi extension itself; batch cap ${grouped(batchCap)} B`,
    batchCapBytes: batchCap,
    staticBatchBytes: caps.perBatchBytes,
    perResultBytes: caps.perResultBytes,
    floorBytes: floor,
    maxLines: caps.maxLines,
    usage: null,
    headroomBytes: null,
  };
  return { sections, text, deferred, budget, delivered, kept };
}

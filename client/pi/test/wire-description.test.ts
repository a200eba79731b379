// The TypeScript method table and shapes (src/methods.ts, src/protocol.ts) against the daemon's
// own (protocol/methods.hpp and the wire::shape descriptions), as the C++ side prints them
// (tests/support/wire_description_main.cpp): the same methods, directions and kinds, and for
// every params and result the same members, each as optional, as nullable and of the same type.
// A method or a member added on one side only fails here.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import assert from "node:assert/strict";
import { test } from "node:test";

import { methods, type MethodType } from "../src/methods.js";
import { ErrorCode } from "../src/protocol.js";
import { fieldsOf, type FieldDescription, type TypeDescription } from "../src/wire.js";

interface CppMethod {
  name: string;
  direction: "to_daemon" | "to_client";
  notification?: boolean;
  params: FieldDescription[];
  result?: { nullable: boolean; fields: FieldDescription[] };
}

/** $HANDOFF_WIRE_DESCRIPTION (set by the CTest registration), else next to $HANDOFFD's build. */
function describeCpp(...args: string[]): unknown {
  const daemon = process.env["HANDOFFD"] ?? resolve(import.meta.dirname, "../../../../build/daemon/handoffd");
  const tool = process.env["HANDOFF_WIRE_DESCRIPTION"] ?? resolve(dirname(daemon), "../tests/support/wire_description");
  if (!existsSync(tool)) throw new Error(`wire_description not found at ${tool}: build it, or set HANDOFF_WIRE_DESCRIPTION`);
  return JSON.parse(execFileSync(tool, args, { encoding: "utf8" }));
}

function cppDescription(): CppMethod[] {
  return describeCpp() as CppMethod[];
}

// The TypeScript side has one number type, and its one-of strings are strings.
function plainType(type: TypeDescription): string {
  if (typeof type === "string") return type === "integer" ? "number" : type;
  if ("oneOf" in type) return "string";
  return "object" in type ? "object" : "array";
}

function compareFields(cpp: FieldDescription[], ts: FieldDescription[], where: string, problems: string[]): void {
  const tsByName = new Map(ts.map((f) => [f.name, f]));
  const cppNames = new Set(cpp.map((f) => f.name));
  for (const f of ts) if (!cppNames.has(f.name)) problems.push(`${where}.${f.name}: only in TypeScript`);
  for (const c of cpp) {
    const t = tsByName.get(c.name);
    const at = `${where}.${c.name}`;
    if (t === undefined) {
      problems.push(`${at}: only in C++`);
      continue;
    }
    // C++ reads a nullable member as optional too; TypeScript types it `T | null`, always there.
    const optional = c.optional && !c.nullable;
    if (t.optional !== optional) problems.push(`${at}: optional is ${String(optional)} in C++, ${String(t.optional)} in TypeScript`);
    if (t.nullable !== c.nullable) problems.push(`${at}: nullable is ${String(c.nullable)} in C++, ${String(t.nullable)} in TypeScript`);
    if (plainType(c.type) !== plainType(t.type)) {
      problems.push(`${at}: ${JSON.stringify(c.type)} in C++, ${JSON.stringify(t.type)} in TypeScript`);
      continue;
    }
    if (typeof c.type === "object" && "oneOf" in c.type && typeof t.type === "object" && "oneOf" in t.type) {
      if (JSON.stringify(c.type.oneOf) !== JSON.stringify(t.type.oneOf))
        problems.push(`${at}: one of ${JSON.stringify(c.type.oneOf)} in C++, ${JSON.stringify(t.type.oneOf)} in TypeScript`);
      continue;
    }
    if (typeof c.type === "object" && typeof t.type === "object") {
      const inner = (d: TypeDescription): FieldDescription[] =>
        typeof d === "object" && "object" in d ? d.object : typeof d === "object" && "array" in d ? d.array : [];
      compareFields(inner(c.type), inner(t.type), at, problems);
    }
  }
}

function acceptsNull(method: MethodType): boolean {
  if (method.kind !== "request") return false;
  try {
    method.result.check(null, "");
    return true;
  } catch {
    return false;
  }
}

test("the TypeScript method table is the daemon's: names, directions, kinds, params and results", () => {
  const cpp = cppDescription();
  const ts = new Map<string, MethodType>(Object.values(methods).map((m) => [m.name, m]));
  const problems: string[] = [];
  for (const name of ts.keys()) if (!cpp.some((m) => m.name === name)) problems.push(`${name}: only in TypeScript`);
  for (const c of cpp) {
    const t = ts.get(c.name);
    if (t === undefined) {
      problems.push(`${c.name}: only in C++`);
      continue;
    }
    if (t.direction !== c.direction) problems.push(`${c.name}: goes ${c.direction} in C++, ${t.direction} in TypeScript`);
    const cppKind = c.notification === true ? "notification" : "request";
    if (t.kind !== cppKind) problems.push(`${c.name}: a ${cppKind} in C++, a ${t.kind} in TypeScript`);
    compareFields(c.params, fieldsOf(t.params), `${c.name} params`, problems);
    if (c.result !== undefined && t.kind === "request") {
      compareFields(c.result.fields, fieldsOf(t.result), `${c.name} result`, problems);
      if (acceptsNull(t) !== c.result.nullable) problems.push(`${c.name} result: null is ${c.result.nullable ? "" : "not "}a result in C++`);
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(cpp.length >= 14, "the C++ table lists every method");
});

test("a result that does not fit its shape is named to the member", () => {
  assert.throws(() => methods.subagentCheck.result.check({ childId: "c", title: "", state: "running" }, ""), /status: required/);
  assert.throws(
    () => methods.subagentWait.result.check({ sections: [{ childId: 1 }], text: "", deferred: 0, budget: {}, timedOut: false, pending: [] }, ""),
    /sections\[0\]\.childId: expected a string/,
  );
  const extra = { state: "running", addedLater: true };
  assert.equal(methods.subagentStarted.result.check(extra, ""), extra, "members the shape does not name are kept");
});

test("ErrorCode is the daemon's error codes: the same names and numbers", () => {
  const cpp = describeCpp("--errors") as Record<string, number>;
  // ParseError in TypeScript is parse_error in C++.
  const snake = (name: string): string => name.replace(/[A-Z]/g, (c, at: number) => (at === 0 ? "" : "_") + c.toLowerCase());
  const ts = Object.fromEntries(Object.entries(ErrorCode).map(([name, code]) => [snake(name), code]));
  assert.ok(Object.keys(cpp).length >= 16, `the daemon names ${Object.keys(cpp).length} codes`);
  assert.deepEqual(ts, cpp);
});

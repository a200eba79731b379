// Checks of handoffd's JSON, one per wire shape, from which the TypeScript types are derived
// (`type X = Value<typeof X>`): the same shape both types the code and checks what arrives.
// They mirror protocol/messages.hpp's descriptions (wire::shape); test/wire-description.test.ts
// compares the two field by field, so a member added on one side only fails the build's tests.
// Unknown members are kept (newer daemons may add some); a check never copies the value.

/** How a value's type is described, as protocol/wire.hpp's `fields_of` spells it. */
export type TypeDescription = string | { object: FieldDescription[] } | { array: FieldDescription[] } | { oneOf: string[] };

/** One member: may it be absent (`optional`), may it be null (`nullable`). */
export interface FieldDescription {
  name: string;
  type: TypeDescription;
  optional: boolean;
  nullable: boolean;
}

/** A value that is not what the shape says; `path` names the member ("sections[2].text"). */
export class WireError extends Error {
  constructor(
    readonly path: string,
    what: string,
  ) {
    super(`${path}: ${what}`);
    this.name = "WireError";
  }
}

/** Checks one JSON value and returns it typed, or throws WireError. */
export interface Check<T> {
  readonly check: (value: unknown, path: string) => T;
  readonly type: TypeDescription;
}

/** The TypeScript type a check yields. */
export type Value<C> = C extends Check<infer T> ? T : never;

function primitive<T>(type: TypeDescription, test: (value: unknown) => boolean, expected: string): Check<T> {
  return {
    type,
    check: (value, path) => {
      if (!test(value)) throw new WireError(path, `expected ${expected}`);
      return value as T;
    },
  };
}

export const str: Check<string> = primitive("string", (v) => typeof v === "string", "a string");
export const num: Check<number> = primitive("number", (v) => typeof v === "number", "a number");
export const bool: Check<boolean> = primitive("boolean", (v) => typeof v === "boolean", "true or false");
export const strings: Check<string[]> = primitive(
  "string[]",
  (v) => Array.isArray(v) && v.every((e) => typeof e === "string"),
  "an array of strings",
);
/** A request id: a string or an integer. */
export const stringOrInteger: Check<string | number> = primitive(
  "string|integer",
  (v) => typeof v === "string" || Number.isInteger(v),
  "a string or an integer",
);
/** Any JSON object, unchecked inside. */
export const anyObject: Check<Record<string, unknown>> = primitive("object", isObject, "an object");

/** One of a closed set of strings; described with its values, as the daemon's one_of is. */
export function oneOf<const V extends readonly string[]>(...values: V): Check<V[number]> {
  return primitive({ oneOf: [...values] }, (v) => typeof v === "string" && values.includes(v), `one of ${values.map((v) => `"${v}"`).join(", ")}`);
}

// ---- objects ------------------------------------------------------------------------------

export interface OptionalMember<T> {
  readonly member: Check<T>;
  readonly optional: true;
}
export interface NullableMember<T> {
  readonly member: Check<T>;
  readonly nullable: true;
}
/** A member that may be absent (`key?: T`). */
export function optional<T>(member: Check<T>): OptionalMember<T> {
  return { member, optional: true };
}
/** A member that is always there and may be null (`key: T | null`). */
export function nullable<T>(member: Check<T>): NullableMember<T> {
  return { member, nullable: true };
}

type Entry = Check<unknown> | OptionalMember<unknown> | NullableMember<unknown>;
/** The members of an object, in the order the daemon's description lists them. */
export type Shape = { readonly [key: string]: Entry };

type EntryValue<E> =
  E extends OptionalMember<infer T> ? T : E extends NullableMember<infer T> ? T | null : E extends Check<infer T> ? T : never;
type OptionalKeys<S> = { [K in keyof S]: S[K] extends OptionalMember<unknown> ? K : never }[keyof S];
type RequiredKeys<S> = Exclude<keyof S, OptionalKeys<S>>;
type Simplify<T> = { [K in keyof T]: T[K] } & {};
/** The object type a shape describes. */
export type Infer<S extends Shape> = Simplify<
  { -readonly [K in RequiredKeys<S>]: EntryValue<S[K]> } & { -readonly [K in OptionalKeys<S>]?: EntryValue<S[K]> }
>;

/** A check of an object, which keeps its shape for other shapes to spread. */
export interface ObjectCheck<S extends Shape> extends Check<Infer<S>> {
  readonly shape: S;
}

function entryParts(entry: Entry): { member: Check<unknown>; optional: boolean; nullable: boolean } {
  if ("member" in entry) return { member: entry.member, optional: "optional" in entry, nullable: "nullable" in entry };
  return { member: entry, optional: false, nullable: false };
}

function describe(shape: Shape): FieldDescription[] {
  return Object.entries(shape).map(([name, entry]) => {
    const { member, optional: isOptional, nullable: isNullable } = entryParts(entry);
    return { name, type: member.type, optional: isOptional, nullable: isNullable };
  });
}

function checkMembers(shape: Shape, value: unknown, path: string): void {
  if (!isObject(value)) throw new WireError(path === "" ? "result" : path, "expected an object");
  for (const [key, entry] of Object.entries(shape)) {
    const { member, optional: isOptional, nullable: isNullable } = entryParts(entry);
    const at = path === "" ? key : `${path}.${key}`;
    const v = value[key];
    if (v === undefined) {
      if (isOptional) continue;
      throw new WireError(at, "required");
    }
    if (v === null && (isNullable || isOptional)) continue;
    member.check(v, at);
  }
}

/** An object with these members; others are kept as they came. */
export function object<S extends Shape>(shape: S): ObjectCheck<S> {
  return {
    shape,
    type: { object: describe(shape) },
    check: (value, path) => {
      checkMembers(shape, value, path);
      return value as Infer<S>;
    },
  };
}

/** An array of objects with these members; elements are named "sections[3]". */
export function arrayOf<S extends Shape>(shape: S): Check<Infer<S>[]> {
  return {
    type: { array: describe(shape) },
    check: (value, path) => {
      if (!Array.isArray(value)) throw new WireError(path, "expected an array");
      value.forEach((element, i) => checkMembers(shape, element, `${path}[${i}]`));
      return value as Infer<S>[];
    },
  };
}

/** `member` or null. */
export function orNull<T>(member: Check<T>): Check<T | null> {
  return {
    type: member.type,
    check: (value, path) => (value === null ? null : member.check(value, path)),
  };
}

/** The fields of an object check, for comparing with the daemon's description. */
export function fieldsOf(check: Check<unknown>): FieldDescription[] {
  const type = check.type;
  return typeof type === "object" && "object" in type ? type.object : [];
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

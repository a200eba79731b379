// The `--provider` / `--model` a child Pi gets for subagent_spawn's `model`, checked against Pi's
// model registry (ctx.modelRegistry.getAll()) so that a model Pi does not know is refused at spawn
// instead of surfacing minutes later as a failed child.
//
// Contract (matching is case-insensitive, as Pi's `--model` is):
// - "provider/id" with a provider the registry knows: that provider, and an id one of its models
//   has exactly or contains (Pi's fuzzy match on id and name).
// - Otherwise the whole text is a bare id (OpenRouter ids contain a slash): the parent's provider
//   when one of its models matches, else whichever providers match (Pi picks among them, by
//   credentials).
// - "provider/id" with a known provider and an id nothing matches is what `pi --model
//   provider/id` runs as a custom model id (a model released after the registry was written):
//   accepted likewise, with a `note` for the parent model naming close matches, in case it is a
//   typo. A bare id nothing matches, or an unknown provider, is refused, as Pi refuses it.
// - A trailing `:<thinking level>` (Pi 1.6.0's levels, case-sensitive as Pi's check is) is left
//   for Pi to parse; it is ignored for matching.
// - A provider prefix is the longest provider id the registry knows that the text starts with,
//   followed by "/" (provider ids may hold a "/" themselves), as Pi splits it.
// - A refusal names up to MAX_SUGGESTIONS close matches and how to list every model.

/** What is read of one of Pi's models. */
export interface KnownModel {
  provider: string;
  id: string;
  name?: string;
}

export interface ModelChoice {
  /** `--provider`, or undefined to let Pi choose among the providers that have the model. */
  provider: string | undefined;
  /** `--model`. */
  model: string;
  /** Said to the parent model with the spawn's result: the model is not in Pi's registry. */
  note?: string;
}

/** The most close matches a refusal names. */
const MAX_SUGGESTIONS = 6;
const THINKING_SUFFIX = /:(off|minimal|low|medium|high|xhigh|max)$/;

/** The longest known provider id `text` starts with, then "/", and the id after it. */
function providerPrefix(text: string, models: readonly KnownModel[]): { provider: string; id: string } | undefined {
  const lower = text.toLowerCase();
  let best: { provider: string; id: string } | undefined;
  for (const { provider } of models) {
    const prefix = provider.toLowerCase();
    if (prefix === "" || (best !== undefined && best.provider.length >= provider.length)) continue;
    if (lower.startsWith(`${prefix}/`) && text.length > prefix.length + 1) best = { provider, id: text.slice(prefix.length + 1) };
  }
  return best;
}

export function chooseModel(requested: string, models: readonly KnownModel[], parentProvider: string | undefined): ModelChoice {
  const text = requested.trim();
  const slash = text.indexOf("/");
  const split = providerPrefix(text, models);
  const prefixed = split?.provider;
  const id = split?.id ?? text.slice(slash + 1);
  if (prefixed !== undefined && matching(models.filter((m) => m.provider === prefixed), id).length > 0) return { provider: prefixed, model: id };
  const candidates = matching(models, text);
  if (candidates.length > 0) {
    if (parentProvider !== undefined && candidates.some((m) => m.provider === parentProvider)) return { provider: parentProvider, model: text };
    const providers = new Set(candidates.map((m) => m.provider));
    return providers.size === 1 ? { provider: [...providers][0], model: text } : { provider: undefined, model: text };
  }
  const bare = id.replace(THINKING_SUFFIX, "");
  if (prefixed !== undefined && bare.trim() !== "") {
    const close = closeMatches(models.filter((m) => m.provider === prefixed), id);
    const thinking = bare === id ? "" : ` with thinking level ${id.slice(bare.length + 1)}`;
    return {
      provider: prefixed,
      model: id,
      note:
        `Pi's model registry has no model "${bare}" for provider "${prefixed}": the child runs it as a custom model id${thinking}, ` +
        `as \`pi --model ${text}\` does` +
        (close.length > 0 ? ` (close matches: ${close.join(", ")})` : "") +
        ". If that is a typo, cancel the child and spawn it again with a listed model.",
    };
  }
  const known = new Set(models.map((m) => m.provider.toLowerCase()));
  const unknownProvider = slash > 0 && !known.has(text.slice(0, slash).toLowerCase()) ? text.slice(0, slash) : undefined;
  throw refusal(text, models, slash > 0 ? id : text, unknownProvider);
}

/** Models with exactly this id, else those whose id or name contains it. */
function matching(models: readonly KnownModel[], text: string): KnownModel[] {
  const wanted = text.replace(THINKING_SUFFIX, "").toLowerCase();
  if (wanted === "") return [];
  const exact = models.filter((m) => m.id.toLowerCase() === wanted);
  if (exact.length > 0) return exact;
  return models.filter((m) => m.id.toLowerCase().includes(wanted) || (m.name ?? "").toLowerCase().includes(wanted));
}

/** "provider/id" of the models in `scope` whose id is within a few edits of `id`, closest first. */
function closeMatches(scope: readonly KnownModel[], id: string): string[] {
  const wanted = id.replace(THINKING_SUFFIX, "").toLowerCase();
  return scope
    .map((m) => ({ name: `${m.provider}/${m.id}`, distance: editDistance(wanted, m.id.toLowerCase()) }))
    .filter((m) => m.distance <= Math.max(3, Math.floor(wanted.length / 2)))
    .sort((a, b) => a.distance - b.distance || a.name.localeCompare(b.name))
    .slice(0, MAX_SUGGESTIONS)
    .map((m) => m.name);
}

function refusal(requested: string, scope: readonly KnownModel[], id: string, unknownProvider?: string): Error {
  const close = closeMatches(scope, id);
  const what = unknownProvider !== undefined ? `Pi knows no provider "${unknownProvider}"` : `Pi's model registry has no model "${requested}"`;
  const hint = close.length > 0 ? `; close matches: ${close.join(", ")}` : "";
  return new Error(
    `subagent_spawn: ${what}${hint}. Run \`pi --list-models\` to see every model; a model not listed must be added to models.json first.`,
  );
}

/** Levenshtein distance (ids are short). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1)
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length] ?? 0;
}

// The `--provider` / `--model` a child Pi gets for subagent_spawn's `model`, checked against Pi's
// model registry (ctx.modelRegistry.getAll()) so that a model Pi does not know is refused at spawn
// instead of surfacing minutes later as a failed child.
//
// Contract (matching is case-insensitive, as Pi's `--model` is):
// - "provider/id" with a provider the registry knows: that provider, and an id one of its models
//   has exactly or contains (Pi's fuzzy match on id and name); anything else is refused.
//   Otherwise the whole text is taken as a bare id (OpenRouter ids contain a slash).
// - A bare id: the parent's provider when one of its models matches, else whichever providers
//   match (Pi picks among them, by credentials); none matching is refused.
// - A trailing `:<thinking level>` is left for Pi to parse; it is ignored for matching.
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
}

/** The most close matches a refusal names. */
const MAX_SUGGESTIONS = 6;
const THINKING_SUFFIX = /:(off|minimal|low|medium|high|xhigh)$/i;

export function chooseModel(requested: string, models: readonly KnownModel[], parentProvider: string | undefined): ModelChoice {
  const text = requested.trim();
  const slash = text.indexOf("/");
  if (slash > 0) {
    const provider = models.find((m) => m.provider.toLowerCase() === text.slice(0, slash).toLowerCase())?.provider;
    if (provider !== undefined) {
      const id = text.slice(slash + 1);
      if (matching(models.filter((m) => m.provider === provider), id).length > 0) return { provider, model: id };
      throw refusal(text, models.filter((m) => m.provider === provider), id);
    }
  }
  const candidates = matching(models, text);
  if (candidates.length === 0) {
    const known = new Set(models.map((m) => m.provider.toLowerCase()));
    const unknownProvider = slash > 0 && !known.has(text.slice(0, slash).toLowerCase()) ? text.slice(0, slash) : undefined;
    throw refusal(text, models, slash > 0 ? text.slice(slash + 1) : text, unknownProvider);
  }
  if (parentProvider !== undefined && candidates.some((m) => m.provider === parentProvider)) return { provider: parentProvider, model: text };
  const providers = new Set(candidates.map((m) => m.provider));
  return providers.size === 1 ? { provider: [...providers][0], model: text } : { provider: undefined, model: text };
}

/** Models with exactly this id, else those whose id or name contains it. */
function matching(models: readonly KnownModel[], text: string): KnownModel[] {
  const wanted = text.replace(THINKING_SUFFIX, "").toLowerCase();
  if (wanted === "") return [];
  const exact = models.filter((m) => m.id.toLowerCase() === wanted);
  if (exact.length > 0) return exact;
  return models.filter((m) => m.id.toLowerCase().includes(wanted) || (m.name ?? "").toLowerCase().includes(wanted));
}

function refusal(requested: string, scope: readonly KnownModel[], id: string, unknownProvider?: string): Error {
  const wanted = id.replace(THINKING_SUFFIX, "").toLowerCase();
  const close = scope
    .map((m) => ({ name: `${m.provider}/${m.id}`, distance: editDistance(wanted, m.id.toLowerCase()) }))
    .filter((m) => m.distance <= Math.max(3, Math.floor(wanted.length / 2)))
    .sort((a, b) => a.distance - b.distance || a.name.localeCompare(b.name))
    .slice(0, MAX_SUGGESTIONS)
    .map((m) => m.name);
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

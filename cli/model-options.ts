import process from "node:process";
import { type Command, InvalidArgumentError } from "commander";
import { type ChatOptions, RENDERER_NAMES, type RendererName } from "../clients/llm/index.ts";
import { jsonObject, textOrFile, urlWith } from "./options.ts";

/** What the model flags hold once parsed (`--model` is the caller's: required by one command, optional in another). */
export interface ModelFlags {
  baseUrl?: string;
  model?: string;
  apiKey?: string;
}

export const httpUrl = urlWith(["http", "https"], {
  what: "an http(s) URL of the API root",
  kind: "an http:// or https:// URL",
  example: "http://127.0.0.1:8000/v1",
});

/** `--base-url` and `--api-key`, each falling back to OpenAI's environment variables. */
export function endpointOptions(command: Command): Command {
  return command
    .option("--base-url <url>", "the API root, e.g. http://127.0.0.1:8000/v1; default $OPENAI_BASE_URL", httpUrl)
    .option("--api-key <key>", "sent as a bearer token; default $OPENAI_API_KEY (none when unset)");
}

/** The endpoint and model the flags name, the environment filling in; a clear usage error when there is none. */
export function endpointOf(flags: ModelFlags, command: Command): Pick<ChatOptions, "baseUrl" | "model" | "apiKey"> {
  const baseUrl = flags.baseUrl ?? process.env.OPENAI_BASE_URL;
  if (!baseUrl) command.error("error: give --base-url (e.g. http://127.0.0.1:8000/v1) or set OPENAI_BASE_URL");
  try {
    httpUrl(baseUrl!);
  } catch (error) {
    command.error(`error: OPENAI_BASE_URL: ${(error as Error).message}`);
  }
  return { baseUrl: baseUrl!, model: flags.model!, apiKey: flags.apiKey ?? process.env.OPENAI_API_KEY };
}

/** A named model of `--models`: the endpoint and sampling that play one `llm:<name>` player. */
export interface ModelSpec {
  readonly chat: ChatOptions;
  readonly renderer?: RendererName;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const MODEL_FIELDS = ["model", "baseUrl", "apiKey", "temperature", "maxTokens", "renderer"];

type Bad = (why: string) => InvalidArgumentError;

/** A number field of a model's JSON, checked against its range. */
function numberField(spec: Record<string, unknown>, key: string, bad: Bad, min: number, max: number, integer = false) {
  const v = spec[key];
  if (v === undefined) return undefined;
  if (typeof v !== "number" || v < min || v > max || (integer && !Number.isInteger(v))) {
    throw bad(`\`${key}\` must be ${integer ? "a whole number" : "a number"} in [${min}, ${max}]`);
  }
  return v;
}

function rendererField(spec: Record<string, unknown>, bad: Bad): RendererName | undefined {
  if (spec.renderer !== undefined && !RENDERER_NAMES.includes(spec.renderer as RendererName)) {
    throw bad(`\`renderer\` is one of ${RENDERER_NAMES.join(", ")}`);
  }
  return spec.renderer as RendererName | undefined;
}

function objectOf(raw: unknown, bad: Bad, fields: readonly string[]): Record<string, unknown> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw bad("expected a JSON object");
  const unknown = Object.keys(raw).find((key) => !fields.includes(key));
  if (unknown) throw bad(`unknown field \`${unknown}\`; fields: ${fields.join(", ")}`);
  return raw as Record<string, unknown>;
}

/**
 * `--models`: a JSON object (or @file.json) naming the models that play `llm:<name>` players, e.g.
 * `{"qwen": {"model": "qwen3-8b", "baseUrl": "http://127.0.0.1:8000/v1", "temperature": 0.7}}`; `baseUrl` and
 * `apiKey` default to OPENAI_BASE_URL and OPENAI_API_KEY.
 */
export function modelsOption(value: string): Record<string, ModelSpec> {
  const models: Record<string, ModelSpec> = {};
  for (const [name, raw] of Object.entries(jsonObject(value))) {
    const bad = (why: string) => new InvalidArgumentError(`model ${JSON.stringify(name)}: ${why}.`);
    if (!NAME.test(name)) throw bad("a name is 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit");
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw bad("expected an object with `model`");
    const spec = objectOf(raw, bad, MODEL_FIELDS);
    if (typeof spec.model !== "string" || spec.model === "") {
      throw bad("`model` (the endpoint's model name) is required");
    }
    const baseUrl = spec.baseUrl ?? process.env.OPENAI_BASE_URL;
    if (typeof baseUrl !== "string") throw bad("give `baseUrl` (e.g. http://127.0.0.1:8000/v1) or set OPENAI_BASE_URL");
    httpUrl(baseUrl);
    const renderer = rendererField(spec, bad);
    models[name] = {
      chat: {
        baseUrl,
        model: spec.model,
        apiKey: typeof spec.apiKey === "string" ? spec.apiKey : process.env.OPENAI_API_KEY,
        temperature: numberField(spec, "temperature", bad, 0, 2),
        maxTokens: numberField(spec, "maxTokens", bad, 1, 1_000_000, true),
      },
      ...(renderer !== undefined && { renderer }),
    };
  }
  return models;
}

/** One seat of `ludus llm --seats`: what it changes of the command's model flags. */
export interface SeatSpec {
  readonly model?: string;
  readonly baseUrl?: string;
  /** The environment variable that holds the seat's API key (keys never sit in the file). */
  readonly apiKeyEnv?: string;
  readonly temperature?: number;
  readonly maxTokens?: number;
  readonly seed?: number;
  readonly reasoningEffort?: "low" | "medium" | "high";
  readonly extraBody?: Record<string, unknown>;
  readonly renderer?: RendererName;
  readonly systemPrompt?: string;
}

const SEAT_FIELDS = [
  "model",
  "baseUrl",
  "apiKeyEnv",
  "temperature",
  "maxTokens",
  "seed",
  "reasoningEffort",
  "extraBody",
  "renderer",
  "systemPrompt",
];

/**
 * `--seats`: a JSON array (or @file.json) with one object per seat, in seat order, e.g.
 * `[{"model": "qwen3-8b", "baseUrl": "http://127.0.0.1:8000/v1"}, {"model": "llama-3.1-8b", "apiKeyEnv": "KEY_B"}]`.
 * What a seat leaves out comes from the command's flags.
 */
export function seatsOption(value: string): SeatSpec[] {
  const text = textOrFile(value);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new InvalidArgumentError(`expected a JSON array of seats (or @file.json): ${(cause as Error).message}.`);
  }
  if (!Array.isArray(parsed) || parsed.length < 2 || parsed.length > 32) {
    throw new InvalidArgumentError(
      'expected a JSON array of 2 to 32 seats, e.g. [{"model": "a"}, {"model": "b", "baseUrl": "http://…/v1"}].',
    );
  }
  return parsed.map((raw, i) => {
    const bad = (why: string) => new InvalidArgumentError(`seat ${i}: ${why}.`);
    const spec = objectOf(raw, bad, SEAT_FIELDS);
    for (const key of ["model", "apiKeyEnv", "systemPrompt"]) {
      if (spec[key] !== undefined && (typeof spec[key] !== "string" || spec[key] === "")) {
        throw bad(`\`${key}\` is a non-empty string`);
      }
    }
    if (spec.baseUrl !== undefined) {
      if (typeof spec.baseUrl !== "string") throw bad("`baseUrl` is an http(s) URL");
      httpUrl(spec.baseUrl);
    }
    if (typeof spec.apiKeyEnv === "string" && process.env[spec.apiKeyEnv] === undefined) {
      throw bad(`\`apiKeyEnv\`: the environment variable ${spec.apiKeyEnv} is not set`);
    }
    if (spec.reasoningEffort !== undefined && !["low", "medium", "high"].includes(spec.reasoningEffort as string)) {
      throw bad("`reasoningEffort` is low, medium or high");
    }
    if (spec.extraBody !== undefined && (typeof spec.extraBody !== "object" || Array.isArray(spec.extraBody))) {
      throw bad("`extraBody` is a JSON object");
    }
    return {
      ...spec,
      temperature: numberField(spec, "temperature", bad, 0, 2),
      maxTokens: numberField(spec, "maxTokens", bad, 1, 1_000_000, true),
      seed: numberField(spec, "seed", bad, 0, 2 ** 31 - 1, true),
      renderer: rendererField(spec, bad),
      ...(typeof spec.systemPrompt === "string" ? { systemPrompt: textOrFile(spec.systemPrompt) } : {}),
    } as SeatSpec;
  });
}

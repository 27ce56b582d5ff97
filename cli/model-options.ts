import process from "node:process";
import { type Command, InvalidArgumentError } from "commander";
import { type ChatOptions, RENDERER_NAMES, type RendererName } from "../clients/llm/index.ts";
import { jsonObject, urlWith } from "./options.ts";

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
    const spec = raw as Record<string, unknown>;
    const unknown = Object.keys(spec).find((key) => !MODEL_FIELDS.includes(key));
    if (unknown) throw bad(`unknown field \`${unknown}\`; fields: ${MODEL_FIELDS.join(", ")}`);
    if (typeof spec.model !== "string" || spec.model === "") {
      throw bad("`model` (the endpoint's model name) is required");
    }
    const baseUrl = spec.baseUrl ?? process.env.OPENAI_BASE_URL;
    if (typeof baseUrl !== "string") throw bad("give `baseUrl` (e.g. http://127.0.0.1:8000/v1) or set OPENAI_BASE_URL");
    httpUrl(baseUrl);
    const number = (key: string, min: number, max: number, integer = false) => {
      const v = spec[key];
      if (v === undefined) return undefined;
      if (typeof v !== "number" || v < min || v > max || (integer && !Number.isInteger(v))) {
        throw bad(`\`${key}\` must be ${integer ? "a whole number" : "a number"} in [${min}, ${max}]`);
      }
      return v;
    };
    if (spec.renderer !== undefined && !RENDERER_NAMES.includes(spec.renderer as RendererName)) {
      throw bad(`\`renderer\` is one of ${RENDERER_NAMES.join(", ")}`);
    }
    models[name] = {
      chat: {
        baseUrl,
        model: spec.model,
        apiKey: typeof spec.apiKey === "string" ? spec.apiKey : process.env.OPENAI_API_KEY,
        temperature: number("temperature", 0, 2),
        maxTokens: number("maxTokens", 1, 1_000_000, true),
      },
      ...(spec.renderer !== undefined && { renderer: spec.renderer as RendererName }),
    };
  }
  return models;
}

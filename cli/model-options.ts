import process from "node:process";
import type { Command } from "commander";
import type { ChatOptions } from "../clients/llm/index.ts";
import { urlWith } from "./options.ts";

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

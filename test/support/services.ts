import process from "node:process";

/**
 * The services some suites need beyond Node and npm, each named by the variable that points the suite at it
 * (`.ci/run` starts PostgreSQL and Redis and sets both). Without it a suite is skipped, and says so in its name and in
 * the run's last lines (test/support/summary-reporter.ts); in CI (`CI` set) a missing service fails the suite instead,
 * so that a green run never hides one.
 */
export const SERVICES = {
  postgres: {
    name: "PostgreSQL",
    variable: "DATABASE_URL",
    example: "postgres://postgres@127.0.0.1:5432/test",
    port: 5432,
  },
  redis: { name: "Redis", variable: "REDIS_URL", example: "redis://127.0.0.1:6379", port: 6379 },
} as const;
export type Service = keyof typeof SERVICES;

/** The URL of `service` on this machine, if the suite was told of one. */
export const serviceUrl = (service: Service): string | undefined =>
  process.env[SERVICES[service].variable] || undefined;

/**
 * Where `service` listens. Safe to call while a suite is collected, which happens even when the suite is skipped:
 * without the service it names its default address.
 */
export function serviceAddress(service: Service): { host: string; port: number } {
  const url = new URL(serviceUrl(service) ?? SERVICES[service].example);
  return { host: url.hostname, port: Number(url.port || SERVICES[service].port) };
}

/** How to enable the suites that need `service`. */
export const howToEnable = (service: Service) => {
  const { name, variable, example } = SERVICES[service];
  return `${name} suites skipped: set ${variable} (e.g. ${variable}=${example}) to run them, as .ci/run does`;
};

/** Whether the services a suite needs are here, and the suite's name: `what`, or why it is skipped. */
export function needs(services: readonly Service[], what: string): { ready: boolean; suite: string } {
  const missing = services.filter((s) => !serviceUrl(s));
  if (missing.length && process.env.CI) {
    throw new Error(`${what} needs ${missing.map((s) => SERVICES[s].variable).join(" and ")}, which CI must set`);
  }
  const names = missing.map((s) => SERVICES[s].variable).join(" and ");
  return { ready: !missing.length, suite: missing.length ? `${what} (skipped: no ${names})` : what };
}

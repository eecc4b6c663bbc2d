/** A line the plugin logged, with its level. */
export interface LogLine {
  level: "debug" | "info" | "warn" | "error";
  message: string;
}

/** A Medusa logger for module tests that keeps every line it is given, for assertions. */
export function recordingLogger(): {
  logger: Record<LogLine["level"], (message: string) => void>;
  lines: LogLine[];
} {
  const lines: LogLine[] = [];
  const keep = (level: LogLine["level"]) => (message: string) => {
    lines.push({ level, message });
  };
  return { logger: { debug: () => {}, info: keep("info"), warn: keep("warn"), error: keep("error") }, lines };
}

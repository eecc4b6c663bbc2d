import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import type { ChargeSchedule } from "../items.js";
import { type ChargeItem, MAX_ITEM_ID_LENGTH, requestOf } from "../items.js";
import { InputError, parseCsv } from "./csv.js";

// The charges of a file, all checked before anything is stored or sent: a bad line is an error
// that names the line and the field (never the customer token's value).

/** CSV columns: the required ones, then the optional ones with what they mean when omitted. */
export const CSV_COLUMNS = {
  item_id: "required: the charge's stable id in the batch (1 to 200 characters)",
  customer_token: "required: the customer's stored token (a GUID)",
  amount: 'required: the amount including VAT, a decimal with at most 2 decimals ("9.99")',
  currency: 'required: ISO 4217 code ("EUR")',
  description: 'the order line\'s text; default "Charge"',
  vat: "VAT in percent; default 0",
  reference: "your order reference (at most 50 characters); default the item id when it fits",
  capture_mode: "Auto or Manual; default the token's mode",
  store_id: "default the token's store",
} as const;

type Column = keyof typeof CSV_COLUMNS;
const REQUIRED: Column[] = ["item_id", "customer_token", "amount", "currency"];

/** Where a field of core's request comes from in a CSV line. */
const COLUMN_OF_PATH: Array<[RegExp, Column]> = [
  [/^customerToken/, "customer_token"],
  [/^order\.currency/, "currency"],
  [/^order\.items\[0\]\.unitPrice/, "amount"],
  [/^order\.items /, "amount"],
  [/^order\.items\[0\]\.vat/, "vat"],
  [/^order\.items\[0\]\.description/, "description"],
  [/^order\.reference/, "reference"],
  [/^order\.captureMode/, "capture_mode"],
  [/^storeId/, "store_id"],
];

export type InputFormat = "csv" | "jsonl";

export function formatOf(path: string, given: string | undefined): InputFormat {
  const format =
    given ??
    (extname(path).toLowerCase() === ".csv"
      ? "csv"
      : extname(path).toLowerCase() === ".jsonl" || extname(path).toLowerCase() === ".ndjson"
        ? "jsonl"
        : undefined);
  if (format === "csv" || format === "jsonl") return format;
  throw new InputError(
    given === undefined
      ? `cannot tell the format of ${path} from its extension: pass --format csv or --format jsonl`
      : `--format must be csv or jsonl (got ${JSON.stringify(given)})`,
  );
}

/** Reads and checks every charge of the file; throws an InputError naming the first bad lines. */
export async function readCharges(
  path: string,
  format: InputFormat,
  schedule: ChargeSchedule,
): Promise<ChargeItem[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new InputError(
      `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  const entries = format === "csv" ? fromCsv(text) : fromJsonLines(text);
  const problems: string[] = [];
  const lineOf = new Map<string, number>();
  for (const { line, item, problem } of entries) {
    if (problem !== undefined) {
      problems.push(`line ${line}: ${problem}`);
      continue;
    }
    const where = `line ${line} (item ${item!.itemId})`;
    const earlier = lineOf.get(item!.itemId);
    if (earlier !== undefined)
      problems.push(`${where}: item_id appears before, on line ${earlier}; one item id is one charge`);
    lineOf.set(item!.itemId, line);
    const built = requestOf(item!, schedule);
    if ("invalid" in built)
      problems.push(`${where}: ${format === "csv" ? inColumns(built.invalid) : built.invalid}`);
  }
  if (problems.length > 0) {
    const shown = problems.slice(0, 10);
    if (problems.length > 10) shown.push(`… and ${problems.length - 10} more`);
    throw new InputError(
      `${path} has ${problems.length} bad line(s); nothing was sent:\n  ${shown.join("\n  ")}`,
    );
  }
  if (lineOf.size === 0) throw new InputError(`${path} holds no charges`);
  return entries.map((entry) => entry.item!);
}

interface Entry {
  line: number;
  item?: ChargeItem;
  problem?: string;
}

function fromCsv(text: string): Entry[] {
  const [header, ...rows] = parseCsv(text);
  if (header === undefined) return [];
  const columns = header.fields.map((name) => name.trim().toLowerCase());
  for (const name of columns) {
    if (!(name in CSV_COLUMNS)) {
      throw new InputError(
        `line ${header.line}: unknown column ${JSON.stringify(name)}; the columns are ${Object.keys(CSV_COLUMNS).join(", ")}`,
      );
    }
  }
  const missing = REQUIRED.filter((name) => !columns.includes(name));
  if (missing.length > 0)
    throw new InputError(`line ${header.line}: the header lacks the column(s) ${missing.join(", ")}`);
  return rows.map(({ line, fields }) => {
    if (fields.length !== columns.length) {
      return { line, problem: `has ${fields.length} fields, the header ${columns.length}` };
    }
    const value = (name: Column): string | undefined => {
      const found = fields[columns.indexOf(name)]?.trim();
      return found === undefined || found === "" ? undefined : found;
    };
    const empty = REQUIRED.filter((name) => value(name) === undefined);
    if (empty.length > 0) return { line, problem: `${empty.join(", ")} must not be empty` };
    const itemId = value("item_id")!;
    if (itemId.length > MAX_ITEM_ID_LENGTH)
      return { line, problem: `item_id must be at most ${MAX_ITEM_ID_LENGTH} characters` };
    const captureMode = value("capture_mode");
    if (captureMode !== undefined && captureMode !== "Auto" && captureMode !== "Manual") {
      return { line, problem: `capture_mode must be Auto or Manual` };
    }
    const reference = value("reference") ?? (itemId.length <= 50 ? itemId : undefined);
    const storeId = value("store_id");
    const item: ChargeItem = {
      itemId,
      customerToken: value("customer_token")!,
      order: {
        currency: value("currency")!,
        ...(reference === undefined ? {} : { reference }),
        items: [
          {
            id: "1",
            description: value("description") ?? "Charge",
            unitPrice: value("amount")!,
            quantity: "1",
            vat: value("vat") ?? "0",
          },
        ],
      },
      ...(captureMode === undefined ? {} : { captureMode }),
      ...(storeId === undefined ? {} : { storeId }),
    };
    return { line, item };
  });
}

function fromJsonLines(text: string): Entry[] {
  const entries: Entry[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      entries.push({ line, problem: "is not valid JSON" });
      return;
    }
    const problem = shapeProblem(value);
    entries.push(problem === undefined ? { line, item: value as ChargeItem } : { line, problem });
  });
  return entries;
}

function shapeProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "must be a JSON object";
  const item = value as Record<string, unknown>;
  if (
    typeof item.itemId !== "string" ||
    item.itemId.length === 0 ||
    item.itemId.length > MAX_ITEM_ID_LENGTH
  ) {
    return `itemId must be a string of 1 to ${MAX_ITEM_ID_LENGTH} characters`;
  }
  if (typeof item.customerToken !== "string" || item.customerToken.length === 0)
    return "customerToken must be a non-empty string";
  if (typeof item.order !== "object" || item.order === null) return "order must be an object";
  return undefined;
}

/** Core's messages name request fields ("order.items[0].unitPrice …"); a CSV user knows columns. */
function inColumns(message: string): string {
  return message
    .split("; ")
    .map((part) => {
      const found = COLUMN_OF_PATH.find(([pattern]) => pattern.test(part));
      return found === undefined ? part : `column ${found[1]}: ${part}`;
    })
    .join("; ");
}

import type { IPaymentModuleService, MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys } from "@medusajs/framework/utils";
import { signWebhook, type WebhookEvent } from "@purchase-auth/core";
import type { SandboxServer } from "@purchase-auth/sandbox";
import { expect } from "vitest";

/**
 * Authorizes `sessionId` with the service's answer lost (it commits, the answer is dropped): the
 * session is left `unknown`. Returns the authorization.succeeded event the service sent for it
 * (synchronous 200s send one too), undelivered.
 */
export async function authorizeWithLostAnswer(
  payment: IPaymentModuleService,
  sandbox: SandboxServer,
  sessionId: string,
): Promise<WebhookEvent & { data: { orderId: string } }> {
  sandbox.injectFault({
    kind: "drop_after_commit",
    match: { method: "POST", path: "/purchase/authorizations" },
    count: null,
  });
  try {
    await expect(payment.authorizePaymentSession(sessionId, {})).rejects.toThrow(/not authorized/);
  } finally {
    sandbox.clearFaults();
  }
  const [unknown] = await payment.listPaymentSessions({ id: sessionId });
  expect(unknown?.data).toMatchObject({ state: "unknown", authorize_attempt: 1 });
  return succeededEventOf(sandbox, sessionId);
}

/** A succeeded authorization's webhook event. */
export type SucceededEvent = WebhookEvent & { data: { orderId: string; authorizationId: string } };

/**
 * The authorization.succeeded event the service sent for `sessionId` (its actionReference), once
 * the service's scheduled work has run; undelivered unless a webhook URL is registered.
 */
export async function succeededEventOf(sandbox: SandboxServer, sessionId: string): Promise<SucceededEvent> {
  await sandbox.settle();
  const succeeded = sandbox
    .events()
    .map((entry) => entry.event)
    .find(
      (event) =>
        event.type === "authorization.succeeded" &&
        (event.data as { actionReference?: string }).actionReference === sessionId,
    );
  expect(succeeded).toBeDefined();
  return succeeded as SucceededEvent;
}

/** Medusa's webhook subscriber's first step: the provider's action for a signed event. */
export async function deliverWebhook(
  payment: IPaymentModuleService,
  provider: string,
  event: WebhookEvent,
  secret: string,
) {
  const signed = signWebhook(event, secret);
  return await payment.getWebhookActionAndData({
    provider,
    payload: { data: {}, rawData: Buffer.from(signed.body), headers: signed.headers },
  });
}

type Raw = (sql: string, bindings?: unknown[]) => Promise<unknown>;

/**
 * `container` with its PostgreSQL connection's `raw` calling `before(sql)` first: a test runs
 * something at an exact point of the job (e.g. after it read its page, before it looks at a session).
 */
export function withStatementHook(
  container: MedusaContainer,
  before: (sql: string, bindings: unknown[]) => Promise<void>,
): MedusaContainer {
  const pg = container.resolve(ContainerRegistrationKeys.PG_CONNECTION) as unknown as { raw: Raw };
  const hooked = new Proxy(pg, {
    get(target, key, receiver) {
      if (key !== "raw") return Reflect.get(target, key, receiver);
      return async (sql: string, bindings?: unknown[]) => {
        await before(sql, bindings ?? []);
        return await target.raw(sql, bindings);
      };
    },
  });
  return {
    resolve: (key: string) =>
      key === ContainerRegistrationKeys.PG_CONNECTION ? hooked : container.resolve(key),
  } as unknown as MedusaContainer;
}

/**
 * Runs `during` (a webhook, a deletion) with `meanwhile` run once, right after Medusa's payment
 * module first reads session `sessionId`: between that read and the write that follows it.
 * Returns what each gave (`meanwhile` undefined if the session was never read).
 */
export async function onFirstSessionRead<T, M>(
  payment: IPaymentModuleService,
  sessionId: string,
  meanwhile: () => Promise<M>,
  during: () => Promise<T>,
): Promise<{ result: T; meanwhile: M | undefined }> {
  const sessions = (
    payment as unknown as {
      paymentSessionService_: { retrieve: (...args: unknown[]) => Promise<unknown> };
    }
  ).paymentSessionService_;
  const retrieve = sessions.retrieve;
  let ran = false;
  let value: M | undefined;
  sessions.retrieve = async function (this: unknown, ...args: unknown[]) {
    const read = await retrieve.apply(this, args);
    if (!ran && args[0] === sessionId) {
      ran = true;
      value = await meanwhile();
    }
    return read;
  };
  try {
    return { result: await during(), meanwhile: value };
  } finally {
    sessions.retrieve = retrieve;
  }
}

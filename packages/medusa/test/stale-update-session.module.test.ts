import { expect, it } from "vitest";
import { syncProviderTests } from "./support/sync-provider-tests";

// The cart-completion middleware reads the cart's session, then updates it with the order lines. A
// second completion of the same cart (a double click) may authorize the session in between: the
// update, built from the earlier read, must not move the stored state back to "initiated".

syncProviderTests("stale-update-session", ({ payment, suite, providerId, sessionData, serviceOrder }) => {
  it("an update built from a read older than the session's authorization keeps it authorized", async () => {
    const { session } = await suite.openSession(payment, providerId, 44);
    const [read] = await payment.listPaymentSessions({ id: session.id });
    // Meanwhile the other completion authorizes the session, and Medusa records its payment.
    const paid = await payment.authorizePaymentSession(session.id, {});
    const authorized = (await sessionData(session.id)) as { state: string; order_id: string };
    expect(authorized.state).toBe("authorized");

    await payment.updatePaymentSession({
      id: session.id,
      amount: 44,
      currency_code: "eur",
      data: { ...(read?.data ?? {}), order_lines: null, cart_id: "cart_stale" },
    });

    expect(await sessionData(session.id)).toMatchObject({
      state: "authorized",
      order_id: authorized.order_id,
    });
    expect(serviceOrder(authorized.order_id)?.status).toBe("NotActivated");
    expect((await payment.listPayments({ payment_session_id: session.id }))[0]?.id).toBe(paid?.id);
  });
});

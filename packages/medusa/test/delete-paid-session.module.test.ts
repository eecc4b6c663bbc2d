import { expect, it } from "vitest";
import { syncProviderTests } from "./support/sync-provider-tests";

// Medusa deletes every session of a payment collection when a new session is created on it, also
// after the cart completed (its store route, open to anyone who knows the cart id), and never
// rewrites a session's data after a capture: a placed order's session still reads "authorized".
// deletePayment must not release the money of a session Medusa recorded a payment for; it refuses,
// so Medusa keeps the session. (Nothing in the database would stop it otherwise: in Medusa 2.21.2
// payment.payment_session_id has a unique index but no foreign key, so the payment module's delete
// of the session's row, after calling the provider, would succeed and leave the payment naming a
// session that no longer exists.)

syncProviderTests("delete-paid-session", (t) => {
  const { payment } = t;

  /** Medusa deletes the session: the error it gets (undefined when the session was deleted). */
  async function deleteSession(sessionId: string): Promise<Error | undefined> {
    return await payment.deletePaymentSession(sessionId).then(
      () => undefined,
      (error: Error) => error,
    );
  }

  async function expectKept(refused: Error | undefined, sessionId: string, paymentId: string) {
    expect(refused?.message).toContain(`has payment ${paymentId} recorded in Medusa`);
    expect(await payment.listPaymentSessions({ id: sessionId })).toHaveLength(1);
    const [paid] = await payment.listPayments({ id: paymentId });
    expect(paid?.canceled_at ?? null).toBeNull();
  }

  it("an authorized session with a payment is kept, its hold not cancelled", async () => {
    const { session, paymentId, orderId } = await t.authorizedPayment(41);
    const refused = await deleteSession(session.id);
    expect(t.serviceOrder(orderId)).toMatchObject({ status: "NotActivated", cancelledAmount: "0.00" });
    await expectKept(refused, session.id, paymentId);
  });

  it("a captured payment's session (data still authorized) is kept, nothing refunded", async () => {
    const { session, paymentId, orderId } = await t.authorizedPayment(42);
    await payment.capturePayment({ payment_id: paymentId });
    expect((await t.sessionData(session.id))?.state).toBe("authorized");
    const refused = await deleteSession(session.id);
    expect(t.serviceOrder(orderId)).toMatchObject({
      status: "Activated",
      capturedAmount: "42.00",
      refundedAmount: "0.00",
    });
    await expectKept(refused, session.id, paymentId);
  });

  it("an unknown session Medusa recorded a payment for is kept, its key not resent", async () => {
    const { session, paymentId, orderId } = await t.authorizedPayment(43);
    // The session's data reads unknown while its payment is live: resending the key would find the
    // order and release it.
    await t
      .pg()
      .raw(
        `update payment_session set data = data || '{"state":"unknown","authorize_attempt":1}'::jsonb where id = ?`,
        [session.id],
      );
    const sent = t.sandbox().authorizations().length;
    const refused = await deleteSession(session.id);
    expect(t.serviceOrder(orderId)).toMatchObject({ status: "NotActivated", cancelledAmount: "0.00" });
    expect(t.sandbox().authorizations()).toHaveLength(sent);
    await expectKept(refused, session.id, paymentId);
  });

  it("a session whose payment was canceled is not refused by the provider", async () => {
    const { session, paymentId, orderId } = await t.authorizedPayment(44);
    await payment.cancelPayment(paymentId);
    expect(t.serviceOrder(orderId)?.status).toBe("Cancelled");
    const data = await t.sessionData(session.id);
    const deleted = await t.provider().deletePayment({ data });
    expect(deleted.data).toMatchObject({ order_id: orderId, service_status: "Cancelled" });
  });
});

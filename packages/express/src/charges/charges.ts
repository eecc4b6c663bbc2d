import type { Logger, WebhookEvent } from "@purchase-auth/core";
import type { PaymentAlert } from "../reconcile/alerts.js";
import type { ChargeRecord, ChargeStore, StoredWebhookEvent } from "../stores/types.js";
import { authorizationIdOf, newsOf } from "./event-news.js";
import { lostAuthorizationAlert, uniqueByAuthorization } from "./lost-authorizations.js";
import type { ChargeNotifier } from "./notifier.js";
import {
  advance,
  type ChargeNews,
  isEarlierAuthorization,
  type NextAttemptOrder,
  operationId,
  startNextAttempt,
} from "./state-machine.js";

/** Called once an event is applied (at least once per event: keep it idempotent). */
export type WebhookEventListener = (
  event: WebhookEvent,
  charge: ChargeRecord | undefined,
) => void | Promise<void>;

export interface ChargesDeps {
  store: ChargeStore;
  notifier: ChargeNotifier;
  logger: Logger;
  onEvent: WebhookEventListener | undefined;
  /** Raises an alert (logged at error level, then the app's onAlert hook). */
  alert: (alert: PaymentAlert) => Promise<void>;
  /** The clock of `updatedAt` and `receivedAt`, in epoch ms: the router's `now`. Default `Date.now`. */
  now?: () => number;
}

/** What became of a webhook event. */
export type WebhookOutcome = "applied" | "duplicate" | "ignored" | "parked";

/** A charge after stored events were applied to it, and how many of them were marked applied. */
export interface AppliedEvents<Charge = ChargeRecord | undefined> {
  charge: Charge;
  eventsApplied: number;
}

/** Compare-and-set rounds before giving up; each lost round means another writer made progress. */
const MAX_ROUNDS = 25;

/**
 * The charges' bookkeeping on top of a store: every change goes through the state machine and a
 * compare-and-set, so concurrent writers (requests, webhooks, other instances) never lose news.
 */
export class Charges {
  readonly #deps: ChargesDeps;

  constructor(deps: ChargesDeps) {
    this.#deps = deps;
  }

  #date(): Date {
    return new Date(this.#deps.now?.() ?? Date.now());
  }

  /**
   * Applies `news`, in order, as one change; returns the charge as stored afterwards. When the
   * change tells the charge its authorization id, the webhook events that reached us before (stored,
   * waiting for it) are applied too: a webhook can outrun the answer to the create call.
   */
  async apply(reference: string, ...news: ChargeNews[]): Promise<ChargeRecord | undefined> {
    return (await this.#applyWithParked(reference, news, undefined)).charge;
  }

  /**
   * `apply` to a charge the caller holds as it was stored (the one it just sent): that copy is the
   * compare-and-set's first guess, one store read less when nobody changed the charge meanwhile.
   */
  applyTo(charge: ChargeRecord, ...news: ChargeNews[]): Promise<AppliedEvents> {
    // The caller reads `.charge`: an async layer here cost a promise and an await per charge.
    return this.#applyWithParked(charge.reference, news, undefined, charge);
  }

  /**
   * `apply`, and for news from the stored event `ownEvent`: its listener runs first (causal order),
   * then the parked events' listeners and marks, and `ownEvent` is marked applied last — a crash in
   * between leaves it unapplied, so its redelivery applies everything again instead of being
   * skipped as a duplicate.
   */
  async #applyWithParked(
    reference: string,
    news: ChargeNews[],
    ownEvent: WebhookEvent | undefined,
    guess?: ChargeRecord,
  ): Promise<AppliedEvents> {
    // Events parked for an authorization id this news may teach the charge are folded into the
    // same stored change: a crash can never leave the id recorded and their news not applied.
    const id = firstAuthorizationIdOf(news);
    let parked = id === undefined ? NOTHING_PARKED : await this.#deps.store.unappliedEvents(id);
    if (ownEvent !== undefined && parked.length > 0)
      parked = parked.filter((stored) => stored.id !== ownEvent.id);
    let allNews = news;
    if (parked.length > 0) allNews = [...news, ...parked.flatMap((stored) => newsOf(stored.event) ?? [])];
    const { charge, learntAuthorizationId } = await this.#applyNews(reference, allNews, guess);
    if (ownEvent !== undefined) await this.#deps.onEvent?.(ownEvent, charge);
    // Their news is in this change even when it taught the charge no id (it knew it already, or it
    // is an earlier attempt's): left unapplied, the next event of that id folded them in again and
    // raised their alerts (unexpected_authorization) a second time. A crash before they are marked
    // still leaves them to be applied again, and to alert again: twice is better than never.
    let eventsApplied = charge && parked.length > 0 ? await this.#markParkedApplied(parked, charge) : 0;
    if (ownEvent !== undefined) {
      await this.#deps.store.markEventApplied(ownEvent.id);
      eventsApplied++;
    }
    if (!learntAuthorizationId || !charge) return { charge, eventsApplied };
    // Events that arrived between the read above and the change: applied one by one. (A parked
    // event whose listener just failed waits for the next trigger.)
    // Read here rather than in #applyWaitingEvents: when none waits (nearly always), one async
    // call and its await less per charge (~0.4 KiB).
    const waitingEvents = await this.#deps.store.unappliedEvents(charge.authorizationId!);
    if (waitingEvents.length === 0) return { charge, eventsApplied };
    const skip = parked.length === 0 ? undefined : new Set(parked.map((stored) => stored.id));
    const waiting = await this.#applyStoredEvents(charge, waitingEvents, skip);
    return { charge: waiting.charge, eventsApplied: eventsApplied + waiting.eventsApplied };
  }

  /**
   * The parked events folded into a change: their listeners run, and they are marked applied.
   * Returns how many were marked.
   */
  async #markParkedApplied(parked: readonly StoredWebhookEvent[], charge: ChargeRecord): Promise<number> {
    let marked = 0;
    for (const stored of parked) {
      try {
        await this.#deps.onEvent?.(stored.event, charge);
        await this.#deps.store.markEventApplied(stored.id);
        marked++;
      } catch (error) {
        // Already applied to the charge; the event stays unapplied and is applied again (harmless,
        // but its unexpected_authorization alert, if any, may be raised again: better than never).
        this.#deps.logger.error?.("purchase-auth: a parked webhook event's listener failed", {
          eventId: stored.id,
          error: String(error),
        });
      }
    }
    return marked;
  }

  /**
   * Starts the next attempt of a failed charge, for `order`; returns the charge as it is afterwards,
   * and whether this call started that attempt (false when another request already had).
   */
  async startNextAttempt(
    reference: string,
    order: NextAttemptOrder,
  ): Promise<{ charge: ChargeRecord | undefined; started: boolean }> {
    const { charge, changed } = await this.#updateSaying(reference, (current) =>
      startNextAttempt(current, order, this.#date()),
    );
    return { charge, started: changed };
  }

  /**
   * Gives a pending charge up to review with `reason`, if `stillDue` holds for it as stored (the
   * caller decided on a copy that may be old: a resend or a webhook may have moved it on since).
   * `moved` is true only for the call whose change was stored: however many requests and
   * instances try at once, one of them raises the alert.
   */
  async moveToReview(
    reference: string,
    reason: string,
    stillDue: (current: ChargeRecord) => boolean,
  ): Promise<{ charge: ChargeRecord | undefined; moved: boolean }> {
    const { charge, changed } = await this.#updateSaying(reference, (current) =>
      stillDue(current) ? advance(current, { kind: "needs_review", reason }, this.#date()) : undefined,
    );
    return { charge, moved: changed };
  }

  /**
   * Records a merchant write before it is sent. `created` is true only for the call whose stored
   * change created the write's log entry: nobody can have sent its key before.
   */
  async recordWrite(
    reference: string,
    news: Extract<ChargeNews, { kind: "operation" }>,
  ): Promise<{ charge: ChargeRecord | undefined; created: boolean }> {
    const id = operationId(news.operation, news.sequence);
    const { charge, changed } = await this.#updateSaying(
      reference,
      (current) => advance(current, news, this.#date()),
      (current, next) => current.operationLog?.[id] === undefined && next.operationLog?.[id] !== undefined,
    );
    return { charge, created: changed };
  }

  /**
   * `#update`, saying whether this call's change was stored. The last computation decides: the
   * loop ends when it is stored, or when it changes nothing (another caller's change won).
   */
  async #updateSaying(
    reference: string,
    compute: (charge: ChargeRecord) => ChargeRecord | undefined,
    says: (current: ChargeRecord, next: ChargeRecord) => boolean = () => true,
  ): Promise<{ charge: ChargeRecord | undefined; changed: boolean }> {
    let changed = false;
    const { charge } = await this.#update(reference, undefined, (current) => {
      const next = compute(current);
      changed = next !== undefined && says(current, next);
      return next;
    });
    return { charge, changed };
  }

  /**
   * Stores a verified event (deduplicated by id), then applies it to its charge. An event whose
   * charge does not know its authorization id yet stays stored and is applied when it does.
   */
  async receiveWebhook(event: WebhookEvent): Promise<WebhookOutcome> {
    const authorizationId = authorizationIdOf(event)?.toLowerCase();
    const { alreadyApplied } = await this.#deps.store.recordEvent({
      id: event.id,
      ...(authorizationId === undefined ? {} : { authorizationId }),
      event,
      receivedAt: this.#date().toISOString(),
    });
    if (alreadyApplied) return "duplicate";
    if (newsOf(event) === undefined) {
      await this.#deps.onEvent?.(event, undefined);
      await this.#deps.store.markEventApplied(event.id);
      return "ignored";
    }
    const charge = await this.#chargeFor(event, authorizationId);
    if (!charge) return "parked";
    const mayTeachId = charge.authorizationId === undefined;
    const { charge: applied } = await this.#applyEvent(charge.reference, event, mayTeachId);
    // Events of this authorization that an earlier failure left unapplied get another chance.
    if (applied?.authorizationId !== undefined) await this.#applyWaitingEvents(applied);
    return "applied";
  }

  /**
   * Applies the stored events of the charge's authorization that are still unapplied (an earlier
   * application failed): the charge as it is afterwards, and how many events were marked applied,
   * whether or not they changed it (news already applied changes nothing). Never throws for an event.
   */
  async retryWaitingEvents(charge: ChargeRecord): Promise<AppliedEvents<ChargeRecord>> {
    if (charge.authorizationId === undefined) return { charge, eventsApplied: 0 };
    return this.#applyWaitingEvents(charge);
  }

  async #applyWaitingEvents(charge: ChargeRecord): Promise<AppliedEvents<ChargeRecord>> {
    return this.#applyStoredEvents(charge, await this.#deps.store.unappliedEvents(charge.authorizationId!));
  }

  /** Applies the charge's waiting events (as read from the store), but those in `skip`. */
  async #applyStoredEvents(
    charge: ChargeRecord,
    events: readonly StoredWebhookEvent[],
    skip?: ReadonlySet<string>,
  ): Promise<AppliedEvents<ChargeRecord>> {
    let latest = charge;
    let eventsApplied = 0;
    for (const stored of events) {
      if (skip?.has(stored.id)) continue;
      try {
        const applied = await this.#applyEvent(charge.reference, stored.event);
        latest = applied.charge ?? latest;
        eventsApplied += applied.eventsApplied;
      } catch (error) {
        // The charge learnt its id either way; a failing listener must not fail the caller (a
        // shopper's request, or another event's delivery). The event stays stored, unapplied.
        this.#deps.logger.error?.("purchase-auth: applying a stored webhook event failed", {
          eventId: stored.id,
          error: String(error),
        });
      }
    }
    return { charge: latest, eventsApplied };
  }

  /**
   * Applies a stored event; `mayTeachId`: the charge did not know its authorization id when read.
   * Counts it once marked applied, with the events it applied along.
   */
  async #applyEvent(reference: string, event: WebhookEvent, mayTeachId = false): Promise<AppliedEvents> {
    const news = newsOf(event);
    // An event that may teach the charge its authorization id (authorization.succeeded, matched by
    // reference) takes the events parked for that id into the same change, as an answer does: a
    // crash right after could otherwise leave them unapplied while this event counts as applied,
    // so its redelivery is skipped as a duplicate and nothing ever applies them.
    if (news !== undefined && mayTeachId) return this.#applyWithParked(reference, [news], event);
    const { charge, learntAuthorizationId } =
      news === undefined
        ? { charge: undefined, learntAuthorizationId: false }
        : await this.#applyNews(reference, [news]);
    await this.#deps.onEvent?.(event, charge);
    await this.#deps.store.markEventApplied(event.id);
    // Marked first, so the events waiting for this id do not include this one.
    if (!learntAuthorizationId || !charge) return { charge, eventsApplied: 1 };
    const waiting = await this.#applyWaitingEvents(charge);
    return { charge: waiting.charge, eventsApplied: 1 + waiting.eventsApplied };
  }

  async #applyNews(reference: string, news: ChargeNews[], guess?: ChargeRecord) {
    // Allocated only when there is an alert (almost never): two arrays less per change.
    let alerts: PaymentAlert[] | undefined;
    const result = await this.#update(reference, guess, (current) => {
      const now = this.#date();
      alerts = undefined;
      let next = current;
      for (const item of news) {
        const alert = lostAuthorizationAlert(next, item);
        if (alert) {
          alerts ??= [];
          alerts.push(alert);
        }
        next = advance(next, item, now) ?? next;
      }
      if (next === current) return undefined;
      // Several news are one change. `next` is advance's own new record, never the stored one.
      next.version = current.version + 1;
      return next;
    });
    // One alert per authorization per change: its authorization.succeeded and a folded order event
    // both say the same money may be held.
    if (alerts !== undefined)
      for (const alert of uniqueByAuthorization(alerts)) await this.#deps.alert(alert);
    return result;
  }

  /**
   * The charge an event is about: by authorization id, or, for `authorization.succeeded` (which
   * carries the order reference), by reference while the charge does not know its id yet.
   * `authorization.failed` is never matched by reference: it may be a late event of an earlier
   * attempt whose id we never learnt, and must not fail the current one. It stays stored and is
   * applied once the charge learns its id (the answer to the create call, or a resent POST). An
   * event naming an earlier attempt's id is matched to the charge, where it changes nothing (and
   * is logged as an alert if it says that authorization succeeded).
   */
  async #chargeFor(
    event: WebhookEvent,
    authorizationId: string | undefined,
  ): Promise<ChargeRecord | undefined> {
    const { store } = this.#deps;
    const byId =
      authorizationId === undefined ? undefined : await store.findByAuthorizationId(authorizationId);
    if (byId) return byId;
    if (event.type !== "authorization.succeeded" && event.type !== "authorization.failed") return undefined;
    if (event.data.reference === undefined) return undefined;
    const byReference = await store.findByReference(event.data.reference);
    if (!byReference) return undefined;
    // authorization.succeeded: the charge's own authorization outrunning the create call's answer,
    // or one it does not hold (another authorization for this reference): the state machine tells
    // them apart on the record it changes, alerts about the other, and remembers it as not its own.
    if (event.type === "authorization.succeeded") return byReference;
    // authorization.failed: only an earlier attempt's, where it changes nothing.
    const earlier = authorizationId !== undefined && isEarlierAuthorization(byReference, authorizationId);
    return earlier ? byReference : undefined;
  }

  /**
   * Stores `compute(current)` by compare-and-set, reading the charge again after each lost round.
   * `guess`: the caller's copy, tried first instead of a read. Only a stored change can prove it
   * current (the version matched); when it computes no change it proves nothing, so the store is
   * read and the news computed again.
   */
  async #update(
    reference: string,
    guess: ChargeRecord | undefined,
    compute: (charge: ChargeRecord) => ChargeRecord | undefined,
  ): Promise<{ charge: ChargeRecord | undefined; learntAuthorizationId: boolean }> {
    const { store, notifier } = this.#deps;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      let current = round === 0 ? guess : undefined;
      let next = current === undefined ? undefined : compute(current);
      if (current === undefined || next === undefined) {
        current = await store.findByReference(reference);
        if (!current) return { charge: undefined, learntAuthorizationId: false };
        next = compute(current);
        if (!next) return { charge: current, learntAuthorizationId: false };
      }
      const saved = await store.compareAndSet(current.version, next);
      if (saved) {
        notifier.changed(saved);
        const learnt = current.authorizationId === undefined && saved.authorizationId !== undefined;
        return { charge: saved, learntAuthorizationId: learnt };
      }
    }
    throw new Error(`Charge ${reference} kept changing during ${MAX_ROUNDS} compare-and-set rounds`);
  }
}

/** The first authorization id the news name, lower case. */
function firstAuthorizationIdOf(news: readonly ChargeNews[]): string | undefined {
  for (const item of news) {
    if ("authorizationId" in item && item.authorizationId !== undefined)
      return item.authorizationId.toLowerCase();
  }
  return undefined;
}

/** What the store answers when no news names an authorization id (no allocation per charge). */
const NOTHING_PARKED: readonly StoredWebhookEvent[] = Object.freeze([]);

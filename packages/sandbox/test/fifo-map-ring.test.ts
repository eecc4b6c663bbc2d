import { describe, expect, it } from "vitest";
import { FifoMap } from "../src/core/bounded.js";
import { SeededRandom } from "../src/core/prng.js";

// FifoMap (a ring) against a Map, with mutations of every kind *inside* walks (adds that grow
// the ring, deletes ahead/behind, evictions past the walk's place, re-sets), and many seeds.

type Op = (fifo: FifoMap<number, number>, ref: Map<number, number>, r: SeededRandom, step: number) => void;

function evict<K>(fifo: FifoMap<K, number>, ref: Map<K, number>, max: number): void {
  const evicted: number[] = [];
  fifo.evictBeyond(max, (v) => evicted.push(v));
  const expected: number[] = [];
  while (ref.size > max) {
    const [k, v] = ref.entries().next().value as [K, number];
    ref.delete(k);
    expected.push(v);
  }
  expect(evicted).toEqual(expected);
}

function run(seed: number, keySpace: number, steps: number, withClearInWalk: boolean): void {
  const r = new SeededRandom(seed);
  const fifo = new FifoMap<number, number>();
  const ref = new Map<number, number>();
  let stamp = 0;
  const mutate: Op = (f, m, rr) => {
    const key = Math.floor(rr.next() * keySpace);
    const roll = rr.next();
    const v = ++stamp;
    if (roll < 0.3) {
      f.set(key, v);
      m.set(key, v);
    } else if (roll < 0.45) {
      if (!m.has(key)) {
        f.add(key, v);
        m.set(key, v);
      } else {
        f.add(key, v); // present: must act as set
        m.set(key, v);
      }
    } else if (roll < 0.8) {
      expect(f.delete(key)).toBe(m.delete(key));
    } else if (roll < 0.9) {
      evict(f, m, Math.floor(rr.next() * (m.size + 1)));
    } else {
      expect(f.oldest()).toBe(m.values().next().value);
    }
  };
  for (let step = 0; step < steps; step++) {
    const roll = r.next();
    if (roll < 0.85) {
      mutate(fifo, ref, r, step);
    } else {
      // Walk both with the same decisions; decisions are drawn from a copy of the generator state by
      // recording them on the fifo walk and replaying on the Map walk.
      const decisions: number[] = [];
      const seenF: number[] = [];
      let budget = 1 + Math.floor(r.next() * 200);
      const rr = new SeededRandom(Math.floor(r.next() * 1e9));
      // Record the random draws used inside the fifo walk so the Map walk replays them.
      const tape: number[] = [];
      const recording = {
        next: () => {
          const x = rr.next();
          tape.push(x);
          return x;
        },
      } as SeededRandom;
      fifo.walkFromOldest((value, key) => {
        seenF.push(value);
        if (--budget <= 0) return false;
        const d = recording.next();
        decisions.push(d);
        if (d < 0.3) fifo.delete(key);
        else if (d < 0.6) mutateInto(fifo, recording);
        else if (d < 0.62 && withClearInWalk) fifo.clear();
        return true;
      });
      // replay on the Map
      let i = 0;
      const replay = { next: () => tape[i++]! } as SeededRandom;
      const seenM: number[] = [];
      let b = 0;
      const budgetStart = seenF.length;
      for (const [key, value] of ref) {
        seenM.push(value);
        b++;
        if (b >= budgetStart && b === decisions.length + 1) break;
        const d = replay.next();
        if (d < 0.3) ref.delete(key);
        else if (d < 0.6) mutateInto(ref, replay);
        else if (d < 0.62 && withClearInWalk) ref.clear();
      }
      expect(seenF, `seed ${seed} step ${step}`).toEqual(seenM);
    }
    expect(fifo.size).toBe(ref.size);
    expect(fifo.oldest()).toBe(ref.values().next().value);
  }
  expect([...fifo.values()]).toEqual([...ref.values()]);
  for (const [k, v] of ref) expect(fifo.get(k)).toBe(v);

  function mutateInto(target: FifoMap<number, number> | Map<number, number>, rr: SeededRandom): void {
    const key = Math.floor(rr.next() * keySpace * 4);
    const roll = rr.next();
    const v = Math.floor(rr.next() * 1e9);
    if (target instanceof Map) {
      if (roll < 0.5) target.set(key, v);
      else if (roll < 0.8) target.delete(key);
      else {
        const max = Math.floor(rr.next() * (target.size + 1));
        while (target.size > max) target.delete(target.keys().next().value as number);
      }
    } else {
      if (roll < 0.25) target.set(key, v);
      else if (roll < 0.5) target.add(key, v);
      else if (roll < 0.8) target.delete(key);
      else target.evictBeyond(Math.floor(rr.next() * (target.size + 1)));
    }
  }
}

describe("FifoMap against a Map", () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]) {
    it(`mutations inside walks, seed ${seed}`, () => run(seed, 40 + seed * 37, 6_000, false));
  }
  it("clear() inside a walk, then adds: visits what a Map iterator visits", () => {
    const fifo = new FifoMap<number, number>();
    const ref = new Map<number, number>();
    for (let i = 0; i < 10; i++) {
      fifo.set(i, i);
      ref.set(i, i);
    }
    const seenF: number[] = [];
    fifo.walkFromOldest((v) => {
      seenF.push(v);
      if (v === 5) {
        fifo.clear();
        for (let i = 100; i < 110; i++) fifo.add(i, i);
      }
      return seenF.length < 50;
    });
    const seenM: number[] = [];
    for (const [, v] of ref) {
      seenM.push(v);
      if (v === 5) {
        ref.clear();
        for (let i = 100; i < 110; i++) ref.set(i, i);
      }
      if (seenM.length >= 50) break;
    }
    expect(seenF).toEqual(seenM);
  });
  it("large: wrap-around with eviction at a bound, deletes in the middle, re-sets", () => {
    const fifo = new FifoMap<string, number>();
    const ref = new Map<string, number>();
    const r = new SeededRandom(99);
    let n = 0;
    for (let step = 0; step < 200_000; step++) {
      const k = `k${n++}`;
      fifo.add(k, step);
      ref.set(k, step);
      evict(fifo, ref, 1000);
      if (r.next() < 0.3) {
        const victim = `k${n - 1 - Math.floor(r.next() * 900)}`;
        expect(fifo.delete(victim)).toBe(ref.delete(victim));
      }
      if (r.next() < 0.3) {
        const t = `k${n - 1 - Math.floor(r.next() * 900)}`;
        if (ref.has(t)) {
          fifo.set(t, -step);
          ref.set(t, -step);
        }
      }
    }
    expect([...fifo.values()]).toEqual([...ref.values()]);
  });
});

describe("a walk whose visit evicts the front and refills the ring's places", () => {
  it("visits in Map order (places behind the walk reused by new entries)", () => {
    const fifo = new FifoMap<number, number>();
    const ref = new Map<number, number>();
    for (let i = 0; i < 16; i++) {
      fifo.add(i, i);
      ref.set(i, i);
    }
    const act = (m: FifoMap<number, number> | Map<number, number>, first: boolean) => {
      if (!first) return;
      if (m instanceof FifoMap) {
        fifo.evictBeyond(2);
        for (let i = 100; i < 110; i++) fifo.add(i, i);
      } else {
        while (ref.size > 2) ref.delete(ref.keys().next().value as number);
        for (let i = 100; i < 110; i++) ref.set(i, i);
      }
    };
    const seenF: number[] = [];
    fifo.walkFromOldest((v) => {
      seenF.push(v);
      act(fifo, seenF.length === 1);
      return true;
    });
    const seenM: number[] = [];
    for (const [, v] of ref) {
      seenM.push(v);
      act(ref, seenM.length === 1);
    }
    expect(seenF).toEqual(seenM);
  });
});

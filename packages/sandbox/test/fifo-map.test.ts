import { describe, expect, it } from "vitest";
import { FifoMap } from "../src/core/bounded.js";
import { SeededRandom } from "../src/core/prng.js";

// FifoMap replaces Maps whose oldest entry is taken on every insertion (bounded stores). It must keep
// a Map's order exactly: `set` of a present key keeps its place, a deleted and re-added key is new.

function oldestOf<K, V>(map: Map<K, V>): V | undefined {
  return map.values().next().value;
}

describe("FifoMap", () => {
  it("keeps the order of a Map through random sets, deletes, evictions and walks (seed 4242)", () => {
    const random = new SeededRandom(4242);
    const fifo = new FifoMap<number, number>();
    const reference = new Map<number, number>();
    for (let step = 0; step < 20_000; step++) {
      const key = Math.floor(random.next() * 300);
      const roll = random.next();
      if (roll < 0.5) {
        // `add` is `set` for a key believed new; with 300 keys it often is present, and must act as `set`.
        if (roll < 0.25) fifo.set(key, step);
        else fifo.add(key, step);
        reference.set(key, step);
      } else if (roll < 0.8) {
        expect(fifo.delete(key)).toBe(reference.delete(key));
      } else if (roll < 0.9) {
        const max = Math.floor(random.next() * 200);
        const evicted: number[] = [];
        fifo.evictBeyond(max, (value) => evicted.push(value));
        const expected: number[] = [];
        while (reference.size > max) {
          const [oldestKey, value] = reference.entries().next().value as [number, number];
          reference.delete(oldestKey);
          expected.push(value);
        }
        expect(evicted).toEqual(expected);
      } else {
        // Walk from the oldest, deleting odd values, stopping at the first multiple of 7.
        const seen: number[] = [];
        fifo.walkFromOldest((value, walkedKey) => {
          seen.push(value);
          if (value % 7 === 0) return false;
          if (value % 2 === 1) fifo.delete(walkedKey);
          return true;
        });
        const expected: number[] = [];
        for (const [walkedKey, value] of reference) {
          expected.push(value);
          if (value % 7 === 0) break;
          if (value % 2 === 1) reference.delete(walkedKey);
        }
        expect(seen).toEqual(expected);
      }
      expect(fifo.size).toBe(reference.size);
      expect(fifo.oldest()).toBe(oldestOf(reference));
      expect(fifo.get(key)).toBe(reference.get(key));
      expect(fifo.has(key)).toBe(reference.has(key));
    }
    expect([...fifo.values()]).toEqual([...reference.values()]);
    fifo.clear();
    expect([fifo.size, fifo.oldest(), [...fifo.values()]]).toEqual([0, undefined, []]);
  });

  it("keeps the order of a Map used as a bounded store: fresh keys, the oldest evicted, some deleted and re-added (seed 77)", () => {
    // The queue's front is cut off again and again (positions then count from an offset) and its
    // deleted places are compacted away: every lookup, the order and each eviction stay a Map's.
    const random = new SeededRandom(77);
    const fifo = new FifoMap<string, number>();
    const reference = new Map<string, number>();
    const evicted: number[] = [];
    const expectedEvicted: number[] = [];
    for (let step = 0; step < 30_000; step++) {
      const key = `k${step}`;
      if (step % 2 === 0) fifo.set(key, step);
      else fifo.add(key, step);
      reference.set(key, step);
      fifo.evictBeyond(700, (value) => evicted.push(value));
      while (reference.size > 700) {
        const [oldestKey, value] = reference.entries().next().value as [string, number];
        reference.delete(oldestKey);
        expectedEvicted.push(value);
      }
      const roll = random.next();
      const earlier = `k${step - Math.floor(random.next() * 900)}`;
      if (roll < 0.2) {
        expect(fifo.delete(earlier)).toBe(reference.delete(earlier));
      } else if (roll < 0.3) {
        // present: keeps its place; deleted or evicted: new, at the end (`add` the same as `set`)
        if (step % 2 === 0) fifo.set(earlier, -step);
        else fifo.add(earlier, -step);
        reference.set(earlier, -step);
      }
      expect(fifo.get(earlier)).toBe(reference.get(earlier));
      expect(fifo.size).toBe(reference.size);
      expect(fifo.oldest()).toBe(oldestOf(reference));
    }
    expect(evicted).toEqual(expectedEvicted);
    expect([...fifo.values()]).toEqual([...reference.values()]);
    for (const [key, value] of reference) expect(fifo.get(key)).toBe(value);
  });

  it("visits entries added during a walk, as a Map's iterator does", () => {
    const fifo = new FifoMap<string, number>();
    fifo.set("a", 1).set("b", 2);
    const seen: number[] = [];
    fifo.walkFromOldest((value) => {
      seen.push(value);
      if (value === 1) fifo.set("c", 3);
      return true;
    });
    expect(seen).toEqual([1, 2, 3]);
  });

  it("keeps a Map's order through walks that add entries (the ring grows) and evict the oldest (seed 99)", () => {
    const random = new SeededRandom(99);
    const fifo = new FifoMap<string, number>();
    const reference = new Map<string, number>();
    let next = 0;
    for (let round = 0; round < 300; round++) {
      for (let count = Math.floor(random.next() * 40); count > 0; count--) {
        fifo.add(`k${next}`, next);
        reference.set(`k${next}`, next);
        next++;
      }
      const stopAt = 1 + Math.floor(random.next() * 200);
      // Both walks add an entry after each multiple of 3 and evict the two oldest after each multiple of 5.
      const seen: number[] = [];
      let fifoNext = next;
      fifo.walkFromOldest((value) => {
        seen.push(value);
        if (value % 3 === 0) fifo.add(`k${fifoNext}`, fifoNext++);
        if (value % 5 === 0) fifo.evictBeyond(Math.max(0, fifo.size - 2));
        return seen.length < stopAt;
      });
      const expected: number[] = [];
      for (const [, value] of reference) {
        expected.push(value);
        if (value % 3 === 0) reference.set(`k${next}`, next++);
        if (value % 5 === 0) {
          const max = Math.max(0, reference.size - 2);
          while (reference.size > max) reference.delete(reference.keys().next().value as string);
        }
        if (expected.length >= stopAt) break;
      }
      expect(seen).toEqual(expected);
      expect(fifoNext).toBe(next);
      expect(fifo.size).toBe(reference.size);
      expect(fifo.oldest()).toBe(oldestOf(reference));
    }
    expect([...fifo.values()]).toEqual([...reference.values()]);
    for (const [key, value] of reference) expect(fifo.get(key)).toBe(value);
  });

  it("visits what a walk adds after evicting everything, in order (the walk's places are reused)", () => {
    const walkOf = (map: {
      set(key: string, value: number): unknown;
      evictAll(): void;
      walk(visit: (value: number) => void): void;
    }) => {
      for (let index = 0; index < 16; index++) map.set(`a${index}`, index);
      const seen: number[] = [];
      map.walk((value) => {
        seen.push(value);
        if (value !== 0) return;
        map.evictAll();
        for (let index = 0; index < 15; index++) map.set(`b${index}`, 100 + index);
      });
      return seen;
    };
    const fifo = new FifoMap<string, number>();
    const reference = new Map<string, number>();
    const seen = walkOf({
      set: (key, value) => fifo.set(key, value),
      evictAll: () => fifo.evictBeyond(0),
      walk: (visit) =>
        fifo.walkFromOldest((value) => {
          visit(value);
          return true;
        }),
    });
    const expected = walkOf({
      set: (key, value) => reference.set(key, value),
      evictAll: () => reference.clear(),
      walk: (visit) => {
        for (const value of reference.values()) visit(value);
      },
    });
    expect(expected).toEqual([0, ...Array.from({ length: 15 }, (_, index) => 100 + index)]);
    expect(seen).toEqual(expected);
  });

  it("keeps its order when most entries are deleted without eviction (the queue is compacted)", () => {
    const fifo = new FifoMap<number, number>();
    for (let index = 0; index < 100_000; index++) {
      fifo.set(index, index);
      if (index % 100 !== 0) fifo.delete(index);
    }
    expect(fifo.size).toBe(1000);
    expect(fifo.oldest()).toBe(0);
    expect([...fifo.values()].slice(0, 3)).toEqual([0, 100, 200]);
  });
});

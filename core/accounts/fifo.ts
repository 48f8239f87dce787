// A first-in first-out list whose front can be taken, put back and dropped
// cheaply: Array.shift() copies the whole array, which is slow for the
// hundred thousand settlements a long outage can queue.

export interface Fifo<T> {
  readonly length: number;
  push(item: T): void;
  /** Removes and returns up to `count` items from the front. */
  take(count: number): T[];
  /** Puts items back at the front, in their order (a batch that could not be written). */
  putBack(items: T[]): void;
  /** Removes up to `count` items from the front; returns how many. */
  drop(count: number): number;
}

/** Taken items are forgotten in one copy once they are most of the array. */
const COMPACT_AFTER = 1_024;

export function createFifo<T>(): Fifo<T> {
  let items: T[] = [];
  let head = 0;
  const compact = () => {
    if (head >= COMPACT_AFTER && head * 2 >= items.length) {
      items = items.slice(head);
      head = 0;
    }
  };
  return {
    get length() {
      return items.length - head;
    },
    push(item) {
      items.push(item);
    },
    take(count) {
      const taken = items.slice(head, head + count);
      head += taken.length;
      compact();
      return taken;
    },
    putBack(front) {
      items = front.concat(items.slice(head));
      head = 0;
    },
    drop(count) {
      const dropped = Math.max(0, Math.min(count, items.length - head));
      head += dropped;
      compact();
      return dropped;
    },
  };
}

import { assign, createActor, fromPromise, setup, type AnyActorRef } from 'xstate';

/** Baseline (a): N async functions, each awaiting one resolved promise, under `Promise.all`. */
export async function promiseAll(n: number): Promise<void> {
  const work = async (index: number) => {
    await Promise.resolve(index);
    return `ok ${index}`;
  };
  await Promise.all(Array.from({ length: n }, (_, index) => work(index)));
}

/** One child of the raw-XState baseline: invokes one promise actor, then is done. */
const childMachine = setup({
  actors: { answer: fromPromise(async ({ input }: { input: number }) => `ok ${input}`) },
}).createMachine({
  context: ({ input }: { input: number }) => ({ index: input }),
  initial: 'working',
  states: {
    working: { invoke: { src: 'answer', input: ({ context }) => context.index, onDone: 'done' } },
    done: { type: 'final' },
  },
});

/**
 * Baseline (b): raw XState with N children spawned in one `assign` (the cheap way: one copy of the children map),
 * each invoking one `fromPromise`; resolves when every child is done.
 */
export function rawXState(n: number): Promise<void> {
  return new Promise((resolve) => {
    let left = n;
    const parent = setup({
      types: { context: {} as { children: AnyActorRef[] } },
    }).createMachine({
      context: { children: [] },
      entry: assign({
        children: ({ spawn }) => Array.from({ length: n }, (_, index) => spawn(childMachine, { input: index })),
      }),
      on: {
        '*': {
          actions: () => {
            left -= 1;
            if (left === 0) resolve();
          },
        },
      },
    });
    const actor = createActor(parent);
    actor.start();
    if (n === 0) resolve();
  });
}

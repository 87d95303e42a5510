/** Returns a function giving numbers in [0, 1), the same sequence for the same seed (bench/prng.mjs). */
export function mulberry32(seed: number): () => number;

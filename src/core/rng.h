/* Deterministic pseudo-random numbers for the simulator.
 *
 * xoshiro256** seeded through splitmix64: the same seed gives the same
 * sequence on every platform, so a simulated trace can be reproduced
 * bit for bit (rewind, regression tests). Not for cryptography. */
#ifndef TW_CORE_RNG_H
#define TW_CORE_RNG_H

#include <stdbool.h>
#include <stdint.h>

typedef struct tw_rng {
    uint64_t s[4];
    /* Box-Muller yields normals in pairs; the second one waits here so the
     * sequence does not depend on how draws are interleaved across calls. */
    bool has_spare;
    double spare;
} tw_rng;

/* Seeds the generator; `stream` picks an independent sequence for the same
 * seed, so one consumer (e.g. noise) can change how many numbers it draws
 * without shifting the numbers another consumer (e.g. timing) sees. */
void tw_rng_seed(tw_rng *r, uint64_t seed, uint64_t stream);

/* Next raw 64-bit output. */
uint64_t tw_rng_next(tw_rng *r);

/* Uniform double in [0, 1), 53 random bits. */
double tw_rng_uniform(tw_rng *r);

/* Uniform double in [lo, hi). */
double tw_rng_range(tw_rng *r, double lo, double hi);

/* Standard normal draw (mean 0, sigma 1). */
double tw_rng_gauss(tw_rng *r);

#endif

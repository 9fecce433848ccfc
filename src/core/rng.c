/* xoshiro256** (Blackman & Vigna, public domain reference) with splitmix64
 * seeding, plus the uniform and gaussian draws the simulator needs. */
#include "core/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* M_PI is an XSI extension, absent in strict C11 + POSIX mode. */
static const double two_pi = 6.283185307179586476925286766559;

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void tw_rng_seed(tw_rng *r, uint64_t seed, uint64_t stream)
{
    /* Mixing the stream through splitmix first keeps (seed, stream) pairs
     * such as (1, 0) and (0, 1) from producing related states. */
    uint64_t x = stream;
    uint64_t mix = splitmix64(&x);
    x = seed ^ mix;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
    /* splitmix64 is a bijection of a counter, so the four words cannot all be
     * zero (the one state xoshiro must avoid); the check is cheap insurance. */
    if ((r->s[0] | r->s[1] | r->s[2] | r->s[3]) == 0) r->s[0] = 1;
    r->has_spare = false;
    r->spare = 0.0;
}

uint64_t tw_rng_next(tw_rng *r)
{
    uint64_t *s = r->s;
    const uint64_t result = rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double tw_rng_uniform(tw_rng *r) { return (double)(tw_rng_next(r) >> 11) * 0x1.0p-53; }

double tw_rng_range(tw_rng *r, double lo, double hi) { return lo + (hi - lo) * tw_rng_uniform(r); }

double tw_rng_gauss(tw_rng *r)
{
    if (r->has_spare) {
        r->has_spare = false;
        return r->spare;
    }
    /* 1 - u lies in (0, 1], so the logarithm is finite. */
    double u1 = 1.0 - tw_rng_uniform(r);
    double u2 = tw_rng_uniform(r);
    double rad = sqrt(-2.0 * log(u1));
    double ang = two_pi * u2;
    r->spare = rad * sin(ang);
    r->has_spare = true;
    return rad * cos(ang);
}

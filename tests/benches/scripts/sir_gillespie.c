/* Plain C peer of dpinfer-simulators' exact Gillespie SIR (K = 10^6, I0 = 1, theta* =
 * (e^-0.5, e^-3), observation times 0, 17, ..., 153): the textbook loop with xoshiro256++
 * uniforms and exponential waiting times by -log(U). Prints "events seconds ns_per_event".
 * Build: gcc -O2 -o sir_gillespie sir_gillespie.c -lm   (default target, no -march) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t s[4];
static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static inline uint64_t next(void) {
    uint64_t r = rotl(s[0] + s[3], 23) + s[0], t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t; s[3] = rotl(s[3], 45);
    return r;
}
static inline double u01(void) { return (double)(next() >> 11) * 0x1.0p-53; }
static inline double u01_open(void) { return ((double)(next() >> 11) + 0.5) * 0x1.0p-53; }

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 20;
    const double k = 1e6, beta = exp(-0.5), gamma = exp(-3.0);
    uint64_t events = 0;
    double out = 0.0;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int r = 0; r < reps; r++) {
        uint64_t seed = 0x9E3779B97F4A7C15ull * (uint64_t)(r + 1);
        for (int j = 0; j < 4; j++) { seed ^= seed >> 31; seed *= 0xBF58476D1CE4E5B9ull; s[j] = seed | 1; }
        double S = k - 1, I = 1, t = 0;
        for (int l = 0; l < 10; l++) {
            double t_stop = 17.0 * l;
            while (I > 0) {
                double a0 = I * (beta * S / k + gamma);
                double dt = -log(u01_open()) / a0;
                if (t + dt > t_stop) break;
                t += dt;
                events++;
                if (u01() * a0 < beta * S / k * I) { S -= 1; I += 1; } else { I -= 1; }
            }
            t = t_stop;
            out += I;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double sec = (b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec);
    printf("%llu %.6f %.3f %.0f\n", (unsigned long long)events, sec, 1e9 * sec / events, out);
    return 0;
}

// A wake-up probe (bench/README, 2026-11-26): what one thread waking another costs on this machine.
// gcc -O2 -pthread wakeup.c && ./a.out [gap_us]  (default 20000: both cores idle between rounds)
// One thread wakes another through an eventfd and waits for the answer the same way, with a pause
// between rounds so both cores go idle as between spread-out requests. Prints the round trip's p50/p90/p99.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
static int ping, pong;
static void *echo(void *unused) { uint64_t v; for (;;) { read(ping, &v, 8); write(pong, &v, 8); } return NULL; }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
static int cmp(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv) {
    int rounds = 500, gap_us = argc > 1 ? atoi(argv[1]) : 20000;
    ping = eventfd(0, 0); pong = eventfd(0, 0);
    pthread_t t; pthread_create(&t, NULL, echo, NULL);
    double *rt = malloc(sizeof(double) * rounds); uint64_t one = 1, v;
    for (int i = 0; i < rounds; i++) {
        if (gap_us) usleep(gap_us);
        double s = now(); write(ping, &one, 8); read(pong, &v, 8); rt[i] = now() - s;
    }
    qsort(rt, rounds, sizeof(double), cmp);
    printf("gap %d us: round trip (two wake-ups) p50 %.1f us, p90 %.1f us, p99 %.1f us\n", gap_us, rt[rounds / 2], rt[rounds * 9 / 10], rt[rounds * 99 / 100]);
}

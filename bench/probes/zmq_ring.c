// The least a ZeroMQ hop between processes costs at (c)'s spacing (bench/README, 2026-11-27 12:15).
// gcc -O2 zmq_ring.c -lzmq -o zmq_ring && ./zmq_ring HOPS [RATE] [COUNT]
//
// HOPS processes in a ring over TCP loopback, bare libzmq with no layer of ours: the first
// sends a 2 KiB message at RATE a second (default 700, as (c)), spread out, and each other
// process passes it on with a blocking receive and send. What the first gets back took HOPS
// messages: HOPS 3 is the least a receipt can cross between three processes (gateway to
// verifier, verifier to ledger, ledger to gateway), HOPS 4 what Storekeeper crosses today.
// Prints the ring's p50/p90/p99 in microseconds.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

// Member `index` of the ring: pulls from its own port, pushes to the next one's.
static void relay(int base, int index, int hops) {
    void *context = zmq_ctx_new();
    void *in = zmq_socket(context, ZMQ_PULL), *out = zmq_socket(context, ZMQ_PUSH);
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", base + index);
    zmq_bind(in, endpoint);
    snprintf(endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", base + (index + 1) % hops);
    zmq_connect(out, endpoint);
    char buffer[4096];
    for (;;) {
        int size = zmq_recv(in, buffer, sizeof buffer, 0);
        if (size < 0) break;
        zmq_send(out, buffer, size, 0);
    }
}

int main(int argc, char **argv) {
    int hops = argc > 1 ? atoi(argv[1]) : 3;
    double rate = argc > 2 ? atof(argv[2]) : 700;
    int count = argc > 3 ? atoi(argv[3]) : 7000, warmup = 200, base = 20000 + getpid() % 20000;
    if (hops < 2) return 2;
    pid_t children[16];
    for (int i = 1; i < hops && i < 16; i++)
        if ((children[i] = fork()) == 0) { relay(base, i, hops); _exit(0); }

    void *context = zmq_ctx_new();
    void *in = zmq_socket(context, ZMQ_PULL), *out = zmq_socket(context, ZMQ_PUSH);
    char endpoint[64], message[2048], buffer[4096];
    memset(message, 'x', sizeof message);
    snprintf(endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", base);
    zmq_bind(in, endpoint);
    snprintf(endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", base + 1);
    zmq_connect(out, endpoint);
    usleep(300000);  // the ring's connections are up

    double *ring = malloc(sizeof(double) * count), gap = 1e6 / rate, due = now_us();
    for (int i = 0; i < warmup + count; i++) {
        due += gap;
        while (now_us() < due) {
            double left = due - now_us();
            if (left > 0) usleep((useconds_t)left);
        }
        double sent = now_us();
        zmq_send(out, message, sizeof message, 0);
        zmq_recv(in, buffer, sizeof buffer, 0);
        if (i >= warmup) ring[i - warmup] = now_us() - sent;
    }
    qsort(ring, count, sizeof(double), compare);
    printf("%d hops at %.0f/s, %d rings: p50 %.0f us, p90 %.0f us, p99 %.0f us (%.0f us a hop at p50)\n", hops, rate,
           count, ring[count / 2], ring[count * 9 / 10], ring[count * 99 / 100], ring[count / 2] / hops);
    for (int i = 1; i < hops && i < 16; i++) kill(children[i], SIGKILL), waitpid(children[i], NULL, 0);
    return 0;
}

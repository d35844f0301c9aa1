// SPDX-License-Identifier: MIT
/*
 * throttle.c - the per-address limit of failed authentications
 * (throttle.h).
 *
 * Each address has a "theoretical arrival time" tat: every failure moves
 * it one interval (window / burst) past max(tat, now). The address is
 * throttled while tat - now is over (burst - 1) intervals, that is after
 * burst failures in a row with no time to recover, and for as long as it
 * takes one interval to drain. An entry whose tat has passed holds no
 * state worth keeping and is free for another address.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "throttle.h"

#define SLOTS 4096 /* a power of two */
#define PROBE 16

struct slot {
    uint8_t key[9]; /* family byte, then 4 (IPv4) or 8 (IPv6 /64) bytes */
    uint64_t tat;   /* 0: free */
};

struct cfs_http_throttle {
    pthread_mutex_t lock;
    uint64_t interval_us;
    uint64_t tolerance_us; /* (burst - 1) intervals */
    struct slot slots[SLOTS];
};

int cfs_http_throttle_new(unsigned int burst,
                          unsigned int window_s,
                          struct cfs_http_throttle **ret)
{
    struct cfs_http_throttle *t;

    if (burst == 0 || window_s == 0) {
        return -EINVAL;
    }
    t = calloc(1, sizeof(*t));
    if (!t) {
        return -ENOMEM;
    }
    pthread_mutex_init(&t->lock, NULL);
    t->interval_us = (uint64_t)window_s * 1000000u / burst;
    if (t->interval_us == 0) {
        t->interval_us = 1;
    }
    t->tolerance_us = t->interval_us * (burst - 1);
    *ret = t;
    return 0;
}

void cfs_http_throttle_free(struct cfs_http_throttle *t)
{
    if (t) {
        pthread_mutex_destroy(&t->lock);
        free(t);
    }
}

/* The key of @sa; false for an address of another family. */
static bool key_of(const struct sockaddr *sa, uint8_t key[9])
{
    memset(key, 0, 9);
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

        key[0] = 4;
        memcpy(key + 1, &in->sin_addr, 4);
        return true;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        const uint8_t *a = in6->sin6_addr.s6_addr;

        if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
            key[0] = 4;
            memcpy(key + 1, a + 12, 4);
        } else {
            key[0] = 6;
            memcpy(key + 1, a, 8); /* the /64 */
        }
        return true;
    }
    return false;
}

static size_t hash_of(const uint8_t key[9])
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */

    for (size_t i = 0; i < 9; i++) {
        h = (h ^ key[i]) * 1099511628211ull;
    }
    return (size_t)(h ^ (h >> 32)) & (SLOTS - 1);
}

/* The slot of @key, or NULL; with @make, a slot for it (a free or
 * expired one near its hash, else the one nearest to expiring). @pre
 * t->lock. */
static struct slot *
find(struct cfs_http_throttle *t, const uint8_t key[9], uint64_t now, bool make)
{
    size_t h = hash_of(key);
    struct slot *spare = NULL;

    for (size_t i = 0; i < PROBE; i++) {
        struct slot *s = &t->slots[(h + i) & (SLOTS - 1)];

        if (s->tat > now && memcmp(s->key, key, 9) == 0) {
            return s;
        }
        if (!make) {
            continue;
        }
        if (s->tat <= now) {
            if (!spare || spare->tat > now) {
                spare = s; /* free: the first one */
            }
        } else if (!spare || (spare->tat > now && s->tat < spare->tat)) {
            spare = s;
        }
    }
    if (spare) {
        memcpy(spare->key, key, 9);
        spare->tat = 0;
    }
    return spare;
}

unsigned int cfs_http_throttle_check(struct cfs_http_throttle *t,
                                     const struct sockaddr *sa,
                                     uint64_t now_us)
{
    uint8_t key[9];
    unsigned int wait = 0;
    struct slot *s;

    if (!t || !sa || !key_of(sa, key)) {
        return 0;
    }
    pthread_mutex_lock(&t->lock);
    s = find(t, key, now_us, false);
    if (s && s->tat - now_us > t->tolerance_us) {
        uint64_t us = s->tat - now_us - t->tolerance_us;

        wait = (unsigned int)((us + 999999u) / 1000000u);
    }
    pthread_mutex_unlock(&t->lock);
    return wait;
}

void cfs_http_throttle_fail(struct cfs_http_throttle *t,
                            const struct sockaddr *sa,
                            uint64_t now_us)
{
    uint8_t key[9];
    struct slot *s;

    if (!t || !sa || !key_of(sa, key)) {
        return;
    }
    pthread_mutex_lock(&t->lock);
    s = find(t, key, now_us, true);
    if (s) {
        s->tat = (s->tat > now_us ? s->tat : now_us) + t->interval_us;
    }
    pthread_mutex_unlock(&t->lock);
}

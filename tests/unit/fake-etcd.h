/* SPDX-License-Identifier: MIT */
/*
 * fake-etcd.h - an in-memory etcd behind the etcd backend's gateway
 * interface (store/src/etcd/etcd.h: etcd_post_raw(), etcd_watch_stream()),
 * linked in place of gateway.c, so that the backend's unit tests run
 * without etcd: keys with revisions, leases, txns with compares, range
 * reads with limits, deletions, and watches from a revision. And the
 * faults a real cluster has: an answer lost after the request was carried
 * out, every request refused, the watch stream cut while reads answer.
 */
#ifndef FAKE_ETCD_H
#define FAKE_ETCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Forget every key and fault (between tests). */
void fake_etcd_reset(void);

/* Put @key = @val (@len bytes) under @lease (0: none), as another node. */
void fake_etcd_put(const char *key, const void *val, size_t len, int64_t lease);
/* A new lease (it lives until revoked). */
int64_t fake_etcd_lease(void);
/* Whether @key exists; the number of keys that begin with @prefix. */
bool fake_etcd_has(const char *key);
size_t fake_etcd_count(const char *prefix);

/* The next @n txns that put a key beginning with @prefix are carried out
 * and then answered -ETIMEDOUT on every member (their answers lost). */
void fake_etcd_lose_txn_answers(const char *prefix, int n);
/* The next @n txns that put a key beginning with @prefix are carried out,
 * their answer lost, and sent again at once (as the client does to the
 * next member): the answer of the second run comes back. */
void fake_etcd_resend_txns(const char *prefix, int n);
/* Before the next txn that puts a key beginning with @prefix, @hook runs
 * (once): another node's request that etcd carries out first. */
void fake_etcd_before_txn(const char *prefix, void (*hook)(void));
/* Revoke @lease: its keys go. */
void fake_etcd_revoke(int64_t lease);
/* Compact the history up to now: watches from before it are cancelled
 * (as etcd does, with compact_revision), and the open ones cut. */
void fake_etcd_compact(void);
/* Watches deliver what they have in reverse order, one event a message. */
void fake_etcd_reorder(bool on);
/* Cut every watch stream and refuse new ones (@cut), while every other
 * request still answers; or let them work again. */
void fake_etcd_cut_watch(bool cut);

#endif

// SPDX-License-Identifier: MIT
/*
 * entry.c - the log entry format: change sets as JSON (one entry per batch,
 * nothing said twice), deflated; a batch too big for one request in
 * chunks named by its entry; the keys of entries and chunks; decoding
 * every format still in a log (1 to 3). See etcd.h for the keys.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <jansson.h>
#include <zlib.h>

#include <configfs/base64.h>

#include "etcd.h"

/* A log entry of @bytes for @revs revisions, appended or read here. */
void etcd_count_log(struct store_etcd *e, size_t bytes, uint64_t revs)
{
    atomic_fetch_add(&e->log_bytes, bytes);
    atomic_fetch_add(&e->log_revs, revs);
}

/* Where the parts of big batches from revision @rev on begin. */
char *etcd_chunk_key(const struct store_etcd *e, uint64_t rev)
{
    char *k = NULL;

    if (asprintf(&k, "%s/chunk/%020" PRIu64, e->prefix, rev) < 0) {
        return NULL;
    }
    return k;
}

static json_t *enc_change(const struct cfs_change *c)
{
    json_t *o = json_object();

    json_object_set_new(o, "o", json_integer(c->op));
    json_object_set_new(o, "p", json_string(c->path));
    if (c->arg) {
        json_object_set_new(o, "a", etcd_jb64(c->arg, c->arg_len));
    }
    if (c->has_old && c->old) {
        json_object_set_new(o, "h", etcd_jb64(c->old, c->old_len));
    }
    if (c->binary) {
        json_object_set_new(o, "b", json_true());
    }
    if (c->write_only) {
        json_object_set_new(o, "w", json_true());
    }
    return o;
}

uint64_t etcd_set_rev(const struct cfs_store_changeset *set)
{
    return set->n ? set->changes[0].revision : 0;
}

static bool same_principal(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/*
 * Into the log entry @val: @n change sets (revisions consecutive, so each
 * set's is "first" plus its index), committed at @t, and their principal
 * once for the entry when every set has the same one, else with each set.
 * A batch's entry is what etcd stores, replicates and sends every watcher,
 * so nothing in it is said twice.
 */
void etcd_enc_sets(json_t *val,
                   const struct cfs_store_changeset *sets,
                   size_t n,
                   int64_t t)
{
    json_t *arr = json_array();
    bool one = true;

    for (size_t i = 1; i < n && one; i++) {
        one = same_principal(sets[i].principal, sets[0].principal);
    }
    json_object_set_new(val, "t", json_integer(t));
    if (one && sets[0].principal) {
        json_object_set_new(val, "u", json_string(sets[0].principal));
    }
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object(), *cs = json_array();

        if (!one && sets[i].principal) {
            json_object_set_new(o, "u", json_string(sets[i].principal));
        }
        for (size_t j = 0; j < sets[i].n; j++) {
            json_array_append_new(cs, enc_change(&sets[i].changes[j]));
        }
        json_object_set_new(o, "c", cs);
        json_array_append_new(arr, o);
    }
    json_object_set_new(val, "sets", arr);
}

void etcd_dec_free(struct dec_batch *d)
{
    for (size_t i = 0; d->sets && i < d->n; i++) {
        struct cfs_change *cs = (struct cfs_change *)d->sets[i].changes;

        for (size_t j = 0; j < d->sets[i].n; j++) {
            free(cs[j].path);
            free(cs[j].arg);
            free(cs[j].old);
        }
        free(cs);
        free((char *)d->sets[i].principal);
    }
    free(d->sets);
    memset(d, 0, sizeof(*d));
}

/* The change sets of the log entry @entry (format 1: revision, principal and
 * time with each set; 2: etcd_enc_sets()'s; 3: the same, the entry deflated).
 */
static int dec_sets(json_t *entry, struct dec_batch *d)
{
    json_t *arr = json_object_get(entry, "sets");
    json_int_t v = json_integer_value(json_object_get(entry, "v"));
    const char *u_all = json_string_value(json_object_get(entry, "u"));
    json_t *t = json_object_get(entry, "t");
    size_t n = json_array_size(arr);

    if (v < 1 || v > 3) {
        return -EUCLEAN; /* written by a newer configfsd */
    }
    if (!t && n > 0) {
        t = json_object_get(json_array_get(arr, 0), "t");
    }
    d->time_us = json_integer_value(t);
    d->sets = calloc(n ? n : 1, sizeof(*d->sets));
    if (!d->sets) {
        return -ENOMEM;
    }
    d->n = n;
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_array_get(arr, i), *cs = json_object_get(o, "c");
        json_t *r = json_object_get(o, "r"), *u_set = json_object_get(o, "u");
        uint64_t rev = r ? etcd_jnum(r) : d->first + i;
        const char *u = u_set ? json_string_value(u_set) : u_all;
        size_t m = json_array_size(cs);
        struct cfs_change *ch = calloc(m ? m : 1, sizeof(*ch));

        if (!ch) {
            return -ENOMEM;
        }
        d->sets[i].changes = ch;
        d->sets[i].n = m;
        d->sets[i].principal = u ? strdup(u) : NULL;
        for (size_t j = 0; j < m; j++) {
            json_t *c = json_array_get(cs, j);
            const char *p = json_string_value(json_object_get(c, "p"));
            const char *a = json_string_value(json_object_get(c, "a"));
            const char *h = json_string_value(json_object_get(c, "h"));

            ch[j].op = (enum cfs_op)json_integer_value(json_object_get(c, "o"));
            ch[j].revision = rev;
            ch[j].path = strdup(p ? p : "/");
            if (a) {
                (void)cfs_base64_decode(
                    a, strlen(a), &ch[j].arg, &ch[j].arg_len);
            }
            if (h) {
                (void)cfs_base64_decode(
                    h, strlen(h), &ch[j].old, &ch[j].old_len);
                ch[j].has_old = true;
            }
            ch[j].binary = json_is_true(json_object_get(c, "b"));
            ch[j].write_only = json_is_true(json_object_get(c, "w"));
            if (!ch[j].path || (a && !ch[j].arg) || (h && !ch[j].old)) {
                return -EUCLEAN;
            }
        }
    }
    return 0;
}

/* @bytes (at most 16) random bytes as hex digits and a NUL into @out. */
void etcd_random_hex(char *out, size_t bytes)
{
    unsigned char rnd[16];

    if (bytes > sizeof(rnd) || getrandom(rnd, bytes, 0) != (ssize_t)bytes) {
        /* no entropy: a name from the clock and pid is unique enough */
        (void)snprintf(out,
                       2 * bytes + 1,
                       "%0*" PRIx64,
                       (int)(2 * bytes),
                       mono_us() ^ ((uint64_t)getpid() << 40));
        return;
    }
    for (size_t i = 0; i < bytes; i++) {
        (void)snprintf(out + 2 * i, 3, "%02x", rnd[i]);
    }
}

char *etcd_log_key(const struct store_etcd *e, uint64_t rev)
{
    char *k = NULL;

    if (asprintf(&k, "%s%020" PRIu64, e->k_log, rev) < 0) {
        return NULL;
    }
    return k;
}

/*
 * Log entries (format 3) and snapshots (pointer version 2) are deflated:
 * etcd's cost grows with the bytes it is sent, and it stores, replicates
 * and sends every watcher each entry, while the change sets of one batch
 * repeat their paths and field names (a batch of attribute writes shrinks
 * about fivefold) and a cache's pages compress as well. zlib's fastest
 * level: a batch costs less to deflate than etcd spends per byte saved.
 */
char *etcd_deflate_bytes(const void *p, size_t len, size_t *ret_len)
{
    uLongf cap = compressBound((uLong)len);
    char *out = malloc(cap);

    if (!out ||
        compress2(
            (Bytef *)out, &cap, (const Bytef *)p, (uLong)len, Z_BEST_SPEED) !=
            Z_OK) {
        free(out);
        return NULL;
    }
    *ret_len = cap;
    return out;
}

/* The zlib stream @v of @len bytes inflated into @out, NUL-terminated
 * (for the JSON parser). @size: what it must inflate to exactly, or 0
 * for anything up to ETCD_ENTRY_MAX bytes. @return 0, or -EUCLEAN when it
 * is not one stream whole of that size, -ENOMEM. */
int etcd_inflate_bytes(const char *v,
                       size_t len,
                       size_t size,
                       struct store_buf *out)
{
    /* a byte for the NUL, and (@size) one to see it would be bigger */
    size_t limit = size ? size + 2 : ETCD_ENTRY_MAX;
    z_stream z = {0};
    int zr = Z_OK, r = 0;

    memset(out, 0, sizeof(*out));
    if (len > UINT_MAX || inflateInit(&z) != Z_OK) {
        return -EUCLEAN;
    }
    z.next_in = (Bytef *)v;
    z.avail_in = (uInt)len;
    while (zr == Z_OK && r == 0) {
        size_t room;

        if (out->cap - out->n <= 1) {
            size_t cap = size ? limit : out->cap ? out->cap * 2 : len * 8 + 256;
            char *p;

            if (cap > limit) {
                cap = limit;
            }
            if (cap <= out->cap) {
                r = -EUCLEAN; /* bigger than it may be */
                break;
            }
            p = cfs_realloc(out->p, cap);
            if (!p) {
                r = -ENOMEM;
                break;
            }
            out->p = p;
            out->cap = cap;
        }
        room = out->cap - out->n - 1;
        z.next_out = (Bytef *)out->p + out->n;
        z.avail_out = room < UINT_MAX ? (uInt)room : UINT_MAX;
        room = z.avail_out;
        zr = inflate(&z, Z_NO_FLUSH);
        out->n += room - z.avail_out;
    }
    inflateEnd(&z);
    if (r == 0 &&
        (zr != Z_STREAM_END || z.avail_in != 0 || (size && out->n != size))) {
        r = -EUCLEAN;
    }
    if (r < 0) {
        cfs_free(out->p);
        memset(out, 0, sizeof(*out));
        return r;
    }
    out->p[out->n] = '\0';
    return 0;
}

/* A log entry's value @v as read from etcd, parsed: a zlib stream (format
 * 3) or plain JSON (a big batch's entry naming its parts, formats 1, 2).
 * @ret_len (or NULL): the JSON's length. NULL if it is neither, or
 * damaged. */
json_t *etcd_entry_load(const char *v, size_t len, size_t *ret_len)
{
    struct store_buf b;
    json_t *j;

    if (len > 0 && v[0] == '{') {
        b.n = len;
        j = json_loadb(v, len, 0, NULL);
    } else if (etcd_inflate_bytes(v, len, 0, &b) == 0) {
        j = json_loadb(b.p, b.n, 0, NULL);
        cfs_free(b.p);
    } else {
        return NULL;
    }
    if (ret_len) {
        *ret_len = b.n;
    }
    return j;
}

/* A log entry's own fields (format 3), for an append named by @nonce; the
 * change sets, or the parts that hold them, go in after. */
json_t *etcd_entry_new(uint64_t first, uint64_t last, const char *nonce)
{
    json_t *val = json_object();

    json_object_set_new(val, "v", json_integer(3));
    json_object_set_new(val, "first", json_integer((json_int_t)first));
    json_object_set_new(val, "last", json_integer((json_int_t)last));
    json_object_set_new(val, "nonce", json_string(nonce));
    return val;
}

/* Whether @kv, a log entry read back, is the one with @nonce. */
bool etcd_own_entry(json_t *kv, const char *nonce)
{
    size_t len = 0;
    char *v = etcd_kv_field(kv, "value", &len);
    json_t *j = v ? etcd_entry_load(v, len, NULL) : NULL;
    const char *n = json_string_value(json_object_get(j, "nonce"));
    bool own = n && strcmp(n, nonce) == 0;

    json_decref(j);
    free(v);
    return own;
}

/* One log entry of @bytes, parsed (@j: taken), chunks fetched, as change
 * sets. */
int etcd_decode_entry(struct store_etcd *e,
                      json_t *j,
                      size_t bytes,
                      struct dec_batch *d)
{
    int r = 0;

    memset(d, 0, sizeof(*d));
    if (!j) {
        return -EUCLEAN;
    }
    d->first = etcd_jnum(json_object_get(j, "first"));
    d->last = etcd_jnum(json_object_get(j, "last"));
    if (json_object_get(j, "chunks")) {
        const char *id = json_string_value(json_object_get(j, "id"));
        size_t k = (size_t)etcd_jnum(json_object_get(j, "chunks"));
        struct store_buf all = {0};

        for (size_t i = 0; i < k && r == 0 && id; i++) {
            char key[640];
            json_t *body = json_object(), *ans = NULL;

            (void)snprintf(
                key, sizeof(key), "%s/chunk/%s/%06zu", e->prefix, id, i);
            json_object_set_new(body, "key", etcd_jb64s(key));
            r = etcd_post(e, "/v3/kv/range", body, &ans);
            json_decref(body);
            if (r == 0) {
                size_t pl = 0;
                char *part = etcd_kv_field(
                    json_array_get(json_object_get(ans, "kvs"), 0),
                    "value",
                    &pl);

                if (!part || store_buf_add(&all, part, pl) < 0) {
                    r = -EUCLEAN;
                }
                free(part);
            }
            json_decref(ans);
        }
        json_decref(j);
        j = r == 0 && all.p ? etcd_entry_load(all.p, all.n, NULL) : NULL;
        bytes = all.n;
        cfs_free(all.p);
        if (!j) {
            return r < 0 ? r : -EUCLEAN;
        }
    }
    r = dec_sets(j, d);
    json_decref(j);
    if (r < 0) {
        etcd_dec_free(d);
        return r;
    }
    etcd_count_log(e, bytes, d->last >= d->first ? d->last - d->first + 1 : 0);
    return 0;
}

/* One log entry's value, as change sets. */
int etcd_read_entry(struct store_etcd *e,
                    const char *v,
                    size_t len,
                    struct dec_batch *d)
{
    return etcd_decode_entry(e, etcd_entry_load(v, len, NULL), len, d);
}

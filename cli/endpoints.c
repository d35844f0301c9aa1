/* SPDX-License-Identifier: MIT */
/*
 * endpoints.c - configfsctl's list of servers, as etcdctl's --endpoints:
 * `--server a,b,c` (or CONFIGFSCTL_SERVER) names several nodes of a
 * cluster. A request goes to the server in use; when that server cannot
 * be reached, or answers 503 (not ready, no writer), it goes to the next
 * one, and the one that answered stays in use. Only what is safe to send
 * twice is sent again: a GET or HEAD, a write that surely reached no
 * server (refused, not resolved, timed out connecting: libcurl never
 * began to send it), or one answered 503 (the server did not apply it).
 * A write that was sent and got no answer may have been applied: it is
 * not sent again, and the error says its outcome is unknown (ctl.c).
 * watch resumes through the same list (configfsctl.c, with
 * ctl_endpoints_backoff()).
 *
 * And the two commands that ask every server: `cluster` (one line per
 * node: its URL, health, revision, how far it follows the shared log,
 * whether it is the writer and whether it is stale) and `health` (each
 * server's health, when several are given).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmds.h"
#include "ctl.h"

int ctl_endpoints_set(struct ctl *c, const char *list)
{
    const char *p = list;

    ctl_endpoints_free(c);
    while (*p) {
        size_t n = strcspn(p, ",");
        char *s = ctl_xmalloc(n + 1);

        memcpy(s, p, n);
        s[n] = '\0';
        while (n && (s[n - 1] == '/' || s[n - 1] == ' ')) {
            s[--n] = '\0';
        }
        if (n == 0) {
            free(s);
        } else {
            c->servers = ctl_xrealloc(c->servers,
                                      (c->n_servers + 1) * sizeof(*c->servers));
            c->servers[c->n_servers++] = s;
        }
        p += strcspn(p, ",");
        if (*p == ',') {
            p++;
        }
    }
    if (c->n_servers == 0) {
        (void)fprintf(stderr,
                      "configfsctl: --server names no server: '%s'\n"
                      "Try 'configfsctl --help'.\n",
                      list);
        return CTL_EX_USAGE;
    }
    c->at = 0;
    c->server = ctl_xstrdup(c->servers[0]);
    return 0;
}

void ctl_endpoints_free(struct ctl *c)
{
    for (size_t i = 0; i < c->n_servers; i++) {
        free(c->servers[i]);
    }
    free(c->servers);
    c->servers = NULL;
    c->n_servers = 0;
    free(c->server);
    c->server = NULL;
}

static void use(struct ctl *c, size_t i)
{
    free(c->server);
    c->at = i;
    c->server = ctl_xstrdup(c->servers[i]);
}

/* After one attempt that gave @ex and @r: is another server worth it? */
static bool failover(int ex, const struct ctl_resp *r)
{
    if (ex == 0) {
        return r->status == 503;
    }
    if (ex != CTL_EX_UNREACHABLE) {
        return false;
    }
    /* a write is sent again only if it never left */
    return !r->write || !r->sent;
}

static void say_next(const struct ctl *c, int ex, size_t next)
{
    if (ex == 0) {
        (void)fprintf(stderr,
                      "configfsctl: %s answered 503; trying %s\n",
                      c->server,
                      c->servers[next]);
    } else {
        (void)fprintf(stderr, "configfsctl: trying %s\n", c->servers[next]);
    }
}

int ctl_request(struct ctl *c,
                const char *method,
                const char *url,
                const char *ctype,
                const void *body,
                size_t len,
                const char *const *headers,
                struct ctl_resp *r)
{
    size_t first = c->at;

    for (size_t k = 1;; k++) {
        int ex = ctl_request_once(c, method, url, ctype, body, len, headers, r);
        size_t next = (first + k) % (c->n_servers ? c->n_servers : 1);

        if (k >= c->n_servers || !failover(ex, r)) {
            return ex;
        }
        say_next(c, ex, next);
        ctl_resp_done(r);
        use(c, next);
    }
}

struct relay {
    bool (*cb)(const char *data, size_t len, void *ud);
    void *ud;
    bool got; /* some of the stream arrived */
};

static bool relay_cb(const char *data, size_t len, void *ud)
{
    struct relay *rl = ud;

    rl->got = true;
    return rl->cb(data, len, rl->ud);
}

int ctl_stream(struct ctl *c,
               const char *url,
               const char *const *headers,
               bool (*cb)(const char *data, size_t len, void *ud),
               void *ud,
               volatile const sig_atomic_t *stop,
               struct ctl_resp *r)
{
    size_t first = c->at;

    for (size_t k = 1;; k++) {
        struct relay rl = {.cb = cb, .ud = ud};
        int ex = ctl_stream_once(c, url, headers, relay_cb, &rl, stop, r);
        size_t next = (first + k) % (c->n_servers ? c->n_servers : 1);

        /* a stream that started is the caller's to resume */
        if (k >= c->n_servers || rl.got || *stop || !failover(ex, r)) {
            return ex;
        }
        say_next(c, ex, next);
        ctl_resp_done(r);
        use(c, next);
    }
}

bool ctl_endpoints_backoff(struct ctl *c,
                           unsigned attempt,
                           volatile const sig_atomic_t *stop)
{
    /* 0.1 s, 0.2 s, 0.4 s ... then 2 s apart: about a minute in all,
     * or --timeout seconds when that is set */
    long limit_ms = c->timeout > 0 ? c->timeout * 1000 : 60000;
    long spent_ms = 0;
    long step_ms = 100;

    for (unsigned i = 0; i < attempt; i++) {
        spent_ms += step_ms;
        step_ms = step_ms * 2 > 2000 ? 2000 : step_ms * 2;
    }
    if (spent_ms + step_ms > limit_ms) {
        return false;
    }
    for (long waited = 0; waited < step_ms && !*stop; waited += 50) {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 50 * 1000000L};

        (void)nanosleep(&ts, NULL);
    }
    return !*stop;
}

/* ---- cluster and health over every server ------------------------------ */

static long long jint(const json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

/* GET @url of the server in use, parsed; NULL when it did not answer 2xx
 * JSON (then *status holds the status, 0 when unreachable). */
static json_t *get_json(struct ctl *c, const char *url, long *status)
{
    struct ctl_resp r;
    json_t *j = NULL;

    if (ctl_request_once(c, "GET", url, NULL, NULL, 0, NULL, &r) == 0) {
        *status = r.status;
        if (ctl_ok(&r)) {
            j = ctl_json_parse(r.body, r.len, NULL);
        }
    } else {
        *status = 0;
    }
    ctl_resp_done(&r);
    return j;
}

int ctl_cmd_cluster(struct ctl *c, const struct opts *o, int argc, char **argv)
{
    json_t *all = json_array();
    size_t was = c->at;
    int ex = 0;

    (void)o;
    (void)argc;
    (void)argv;
    if (!c->json) {
        (void)printf("%-3s %-32s %-11s %9s %9s %9s %-6s %s\n",
                     "ID",
                     "ENDPOINT",
                     "HEALTH",
                     "REVISION",
                     "APPLIED",
                     "HEAD",
                     "WRITER",
                     "STALE");
    }
    for (size_t i = 0; i < c->n_servers; i++) {
        long info_status, ready_status;
        json_t *info, *ready, *cl;
        const char *health;
        bool stale;

        use(c, i);
        info = get_json(c, "/api/v1", &info_status);
        ready = get_json(c, "/readyz", &ready_status);
        cl = json_object_get(info, "cluster");
        health = info_status == 0 ? "unreachable"
                 : ready          ? "ready"
                                  : "not-ready";
        /* behind the shared log, or not following it */
        stale = cl && (jint(cl, "applied") < jint(cl, "head") ||
                       !json_is_true(json_object_get(cl, "watching")));
        if (info_status == 0) {
            ex = CTL_EX_UNREACHABLE;
        } else if (!ready && ex == 0) {
            ex = CTL_EX_AGAIN;
        }
        if (c->json) {
            (void)json_array_append_new(all,
                                        json_pack("{s:I,s:s,s:s,s:O?,s:b}",
                                                  "id",
                                                  (json_int_t)i + 1,
                                                  "endpoint",
                                                  c->servers[i],
                                                  "health",
                                                  health,
                                                  "info",
                                                  info,
                                                  "stale",
                                                  stale));
        } else if (info) {
            char applied[24] = "-", head[24] = "-";

            if (cl) {
                (void)snprintf(
                    applied, sizeof(applied), "%lld", jint(cl, "applied"));
                (void)snprintf(head, sizeof(head), "%lld", jint(cl, "head"));
            }
            (void)printf("%-3zu %-32s %-11s %9lld %9s %9s %-6s %s\n",
                         i + 1,
                         c->servers[i],
                         health,
                         jint(info, "revision"),
                         applied,
                         head,
                         json_is_true(json_object_get(cl, "is_writer")) ? "yes"
                                                                        : "no",
                         cl ? (stale ? "yes" : "no") : "-");
        } else {
            (void)printf("%-3zu %-32s %-11s %9s %9s %9s %-6s %s\n",
                         i + 1,
                         c->servers[i],
                         health,
                         "-",
                         "-",
                         "-",
                         "-",
                         "-");
        }
        json_decref(info);
        json_decref(ready);
    }
    if (c->json) {
        char *text = json_dumps(all, JSON_COMPACT);

        ctl_put_text(stdout, text ? text : "[]", text ? strlen(text) : 2);
        free(text);
    }
    json_decref(all);
    use(c, was);
    return ex;
}

int ctl_cmd_health(struct ctl *c, const struct opts *o, int argc, char **argv)
{
    size_t was = c->at;
    int worst = 0;

    if (c->n_servers <= 1) {
        return ctl_cmd_health_one(c, o, argc, argv);
    }
    /* each server on its own: no failover from one to the next */
    for (size_t i = 0; i < c->n_servers; i++) {
        struct ctl one;
        char *only[1];
        int ex;

        use(c, i);
        one = *c;
        only[0] = c->servers[i];
        one.servers = only;
        one.n_servers = 1;
        one.at = 0;
        if (!c->json) {
            (void)printf("%s: ", c->servers[i]);
            (void)fflush(stdout);
        }
        ex = ctl_cmd_health_one(&one, o, argc, argv);
        if (ex == CTL_EX_UNREACHABLE && !c->json) {
            (void)printf("unreachable\n");
        }
        /* unreachable outranks not ready, which outranks the rest */
        if (ex == CTL_EX_UNREACHABLE ||
            (ex && worst != CTL_EX_UNREACHABLE && worst != CTL_EX_AGAIN)) {
            worst = ex;
        }
    }
    use(c, was);
    return worst;
}

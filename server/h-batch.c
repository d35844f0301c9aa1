// SPDX-License-Identifier: MIT
/*
 * h-batch.c - POST /api/v1/rename and POST /api/v1/batch: operations named
 * in a JSON body, run in one transaction, so a request either stands whole
 * or changes nothing. Each op is an enum cfs_op, read from the names
 * cfs_op_name() gives, checked and run through one switch each; besides
 * them a batch may hold "compare" ops, etcd's txn compare on a value: the
 * attribute must hold the value given, read in the same transaction (so
 * after the batch's earlier ops, and with no other change in between: a
 * compare-and-set), or the batch fails 412 with the compare's op_index and
 * nothing changed; with an "else" list, a failed leading compare runs
 * those ops instead, in the same transaction (etcd's success/failure).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <configfs/limits.h>
#include <configfs/schema.h>

#include "body.h"
#include "wait/wait.h"
#include "h-batch.h"
#include "json.h"
#include "reply.h"
#include "request.h"
#include "scope.h"

int cfs_http_apply(struct cfs_txn *txn,
                   enum cfs_op op,
                   const char *path,
                   const char *arg,
                   size_t arg_len)
{
    switch (op) {
    case CFS_OP_MKDIR:
        return cfs_mkdir(txn, path);
    case CFS_OP_RMDIR:
        return cfs_rmdir(txn, path);
    case CFS_OP_STORE:
        return cfs_write(txn, path, arg, arg_len);
    case CFS_OP_SYMLINK:
        return cfs_symlink(txn, path, arg);
    case CFS_OP_UNLINK:
        return cfs_unlink(txn, path);
    case CFS_OP_RENAME:
        return cfs_rename(txn, path, arg);
    }
    return -EINVAL;
}

/* One op of a batch, as read from its JSON (strings borrowed from it). */
struct batch_op {
    enum cfs_op op;   /* 0 for a compare */
    bool compare;     /* {"op": "compare", "path", "value", "encoding"?} */
    const char *path; /* "path"; a rename's "from" */
    const char *arg;  /* a symlink's "target", a rename's "to" */
    json_t *value;    /* a store's "value" and "encoding" */
    json_t *encoding;
};

/* A scoped token's op, judged on its paths as resolved in the tree now
 * (after the batch's earlier ops): 0, or -ENOENT when one ends at or
 * crosses a link hidden from the token, as if it did not exist (scope.h);
 * *ret_target when that is the link's target. */
static int
op_reach(struct cfs_http_req *req, const struct batch_op *b, bool *ret_target)
{
    *ret_target = false;
    if (!cfs_http_scope_reaches(req->scope, b->path, true, false)) {
        return -ENOENT;
    }
    if (b->arg && !cfs_http_scope_reaches(
                      req->scope, b->arg, true, b->op == CFS_OP_SYMLINK)) {
        *ret_target = b->op == CFS_OP_SYMLINK;
        return -ENOENT;
    }
    return 0;
}

/* ---- rename ------------------------------------------------------------ */

void cfs_http_handle_rename(struct cfs_http_req *req)
{
    json_t *body = cfs_http_json_body(req);
    char *from = NULL, *to = NULL;
    struct cfs_txn *txn = NULL;
    struct cfs_entry e;
    char *text = NULL;
    size_t text_len = 0;
    uint64_t rev;
    int r;

    if (!body) {
        return;
    }
    if (json_object_size(body) != 2 ||
        cfs_http_body_path(req, json_object_get(body, "from"), "from", &from) <
            0 ||
        cfs_http_body_path(req, json_object_get(body, "to"), "to", &to) < 0) {
        if (!req->resp) {
            cfs_http_bad_request(req,
                                 "the body is {\"from\": PATH, \"to\": PATH}");
        }
        goto out;
    }
    /* both ends in the token's subtrees, before the tree is looked at;
     * then as resolved: an end at or through a link hidden from the token
     * answers as a missing one */
    if (!cfs_http_scope_allow(req, from, true) ||
        !cfs_http_scope_allow(req, to, true)) {
        goto out;
    }
    r = cfs_txn_begin(&txn);
    if (r == 0) {
        bool unused;

        r = op_reach(
            req,
            &(struct batch_op){.op = CFS_OP_RENAME, .path = from, .arg = to},
            &unused);
    }
    if (r == 0) {
        r = cfs_stat(from, &e);
        if (r == 0) {
            rev = e.revision;
            cfs_entry_done(&e);
            if (!cfs_http_if_match(req, rev)) {
                cfs_txn_abort(txn);
                goto out;
            }
            r = cfs_rename(txn, from, to);
        }
    }
    if (r < 0) {
        cfs_http_op_problem(req, r, "rename", from);
        cfs_txn_abort(txn);
        goto out;
    }
    rev = cfs_txn_revision(txn);
    r = cfs_http_commit(req, txn);
    if (r < 0) {
        goto out; /* answered by cfs_http_commit() */
    }
    r = cfs_http_node_text(to, NULL, 0, true, req->scope, &text, &text_len);
    if (r < 0) {
        cfs_http_op_problem(req, r, "stat", to);
        goto out;
    }
    cfs_http_reply_json_text(req, MHD_HTTP_OK, text, text_len);
    if (rev) {
        cfs_http_etag(req, rev);
    }
out:
    free(from);
    free(to);
    json_decref(body);
}

/* ---- batch ------------------------------------------------------------- */

/* The enum cfs_op of @name ("mkdir" ...), or 0. */
static enum cfs_op op_of(const char *name)
{
    for (enum cfs_op op = CFS_OP_MKDIR; name && op <= CFS_OP_RENAME; op++) {
        if (strcmp(name, cfs_op_name(op)) == 0) {
            return op;
        }
    }
    return 0;
}

static void batch_problem(struct cfs_http_req *req,
                          int status,
                          int err,
                          size_t index,
                          const char *detail)
{
    json_t *extra = json_object();

    json_object_set_new(extra, "op_index", json_integer((json_int_t)index));
    cfs_http_problem_json(req, status, err, NULL, detail, extra);
}

/* Member @what of @op is a valid config path. */
static int path_member(struct cfs_http_req *req, json_t *op, const char *what)
{
    char *p = NULL;
    int r = cfs_http_body_path(req, json_object_get(op, what), what, &p);

    free(p);
    return r;
}

/* Read op @i of a batch into @b, checking its syntax before anything
 * changes. False: answered 400 with its op_index. */
static bool
op_read(struct cfs_http_req *req, json_t *op, size_t i, struct batch_op *b)
{
    static const char *const members[] = {
        "op", "path", "value", "encoding", "target", "from", "to", NULL};
    const char *key;
    json_t *v;
    int r;

    memset(b, 0, sizeof(*b));
    b->op = json_is_object(op)
                ? op_of(json_string_value(json_object_get(op, "op")))
                : 0;
    b->compare =
        !b->op && json_is_object(op) &&
        json_is_string(json_object_get(op, "op")) &&
        strcmp(json_string_value(json_object_get(op, "op")), "compare") == 0;
    if (!b->op && !b->compare) {
        batch_problem(req,
                      MHD_HTTP_BAD_REQUEST,
                      -EINVAL,
                      i,
                      "each op is an object whose \"op\" is mkdir, "
                      "rmdir, store, symlink, unlink, rename or compare");
        return false;
    }
    json_object_foreach(op, key, v) {
        size_t k = 0;

        while (members[k] && strcmp(key, members[k]) != 0) {
            k++;
        }
        if (!members[k]) {
            batch_problem(
                req, MHD_HTTP_BAD_REQUEST, -EINVAL, i, "unknown member in op");
            return false;
        }
    }
    switch (b->compare ? CFS_OP_STORE : b->op) {
    case CFS_OP_RENAME:
        r = path_member(req, op, "from");
        if (r == 0) {
            r = path_member(req, op, "to");
        }
        b->path = json_string_value(json_object_get(op, "from"));
        b->arg = json_string_value(json_object_get(op, "to"));
        break;
    case CFS_OP_SYMLINK:
        r = path_member(req, op, "path");
        if (r == 0) {
            r = path_member(req, op, "target");
        }
        b->arg = json_string_value(json_object_get(op, "target"));
        break;
    case CFS_OP_STORE:
        r = path_member(req, op, "path");
        b->value = json_object_get(op, "value");
        b->encoding = json_object_get(op, "encoding");
        if (r == 0 && !b->value) {
            r = -EINVAL;
        }
        break;
    default: /* mkdir, rmdir, unlink */
        r = path_member(req, op, "path");
        break;
    }
    if (b->op != CFS_OP_RENAME) {
        b->path = json_string_value(json_object_get(op, "path"));
    }
    if (r < 0) {
        batch_problem(req,
                      MHD_HTTP_BAD_REQUEST,
                      r == -ENAMETOOLONG ? r : -EINVAL,
                      i,
                      "op has a missing or invalid path, target or value");
        return false;
    }
    /* Every path it names in the token's subtrees: a link's target and a
     * rename's destination as well as its path. */
    if (!cfs_http_scope_covers(req->scope, b->path) ||
        (b->arg && !cfs_http_scope_covers(req->scope, b->arg))) {
        batch_problem(req,
                      MHD_HTTP_FORBIDDEN,
                      -EACCES,
                      i,
                      "op reaches outside the subtrees the token is "
                      "limited to");
        cfs_http_scope_challenge(req);
        return false;
    }
    return true;
}

/* The bytes of the "value" (and "encoding") of op @i (@b), new; NULL
 * when it is not a value (answered 400 with the op_index) or there is no
 * memory (500). */
static char *op_value(struct cfs_http_req *req,
                      const struct batch_op *b,
                      size_t i,
                      size_t *ret_len)
{
    const char *why = NULL;
    char *bytes =
        cfs_http_json_value_bytes(b->value, b->encoding, ret_len, &why);

    if (!bytes) {
        batch_problem(req,
                      why ? MHD_HTTP_BAD_REQUEST
                          : MHD_HTTP_INTERNAL_SERVER_ERROR,
                      why ? -EINVAL : -ENOMEM,
                      i,
                      why ? why : "out of memory");
    }
    return bytes;
}

/* The problem of compare op @i: @status (0: from @err), @detail after
 * "op I (compare PATH): ". */
static void compare_problem(struct cfs_http_req *req,
                            const struct batch_op *b,
                            size_t i,
                            int status,
                            int err,
                            const char *detail)
{
    char text[512];

    (void)snprintf(
        text, sizeof(text), "op %zu (compare %s): %s", i, b->path, detail);
    batch_problem(req, status, err, i, text);
}

/* Check the compare op @i (@b) in the transaction the batch holds: does
 * the attribute at b->path show b->value? A text attribute's value
 * compares as the node JSON shows it and as a store takes it: one
 * trailing newline of show() and of the value given does not count; a
 * binary attribute's bytes compare exactly. @return 1 when it does; 0
 * when it holds another value (answered 412 ESTALE with the op_index
 * when @answer); -1 when there is no value to compare (answered: 404,
 * 409 for a folder or link, 403 for a write-only attribute, 400 for a
 * value that is not). */
static int compare_check(struct cfs_http_req *req,
                         const struct batch_op *b,
                         size_t i,
                         bool answer)
{
    size_t want_len = 0;
    char *want = op_value(req, b, i, &want_len);
    bool hidden_target = false;
    const char *refusal = NULL;
    struct cfs_entry e = {0};
    char *buf = NULL;
    size_t len = 0;
    int ret = -1;
    int r;

    if (!want) {
        return -1;
    }
    r = op_reach(req, b, &hidden_target);
    if (r == 0) {
        r = cfs_stat(b->path, &e);
    }
    if (r == 0 && e.kind != CFS_KIND_ATTR && e.kind != CFS_KIND_BIN_ATTR) {
        r = -EISDIR;
        refusal = "not an attribute: a compare reads an attribute's value";
    } else if (r == 0 && !e.readable) {
        r = -EACCES;
        refusal = "the attribute cannot be read (write-only): there is no "
                  "value to compare";
    }
    if (r == 0) {
        r = cfs_show(b->path, &buf, &len);
    }
    if (r < 0) {
        compare_problem(req, b, i, 0, r, refusal ? refusal : strerror(-r));
    } else {
        if (e.kind == CFS_KIND_ATTR && len && buf[len - 1] == '\n') {
            len--; /* one trailing newline of show() */
        }
        if (e.kind == CFS_KIND_ATTR && want_len && want[want_len - 1] == '\n') {
            want_len--; /* as a store strips it */
        }
        ret = len == want_len &&
              (len == 0 || (buf && memcmp(buf, want, len) == 0));
        if (!ret && answer) {
            compare_problem(req,
                            b,
                            i,
                            MHD_HTTP_PRECONDITION_FAILED,
                            -ESTALE,
                            "the attribute holds another value; nothing "
                            "was changed");
        }
    }
    cfs_free(buf);
    cfs_entry_done(&e);
    free(want);
    return ret;
}

/* Run op @i in @txn. False: answered (400 for a value that is not, or the
 * object model's refusal), with its op_index. */
static bool op_run(struct cfs_http_req *req,
                   struct cfs_txn *txn,
                   const struct batch_op *b,
                   size_t i)
{
    char *bytes = NULL;
    size_t len = 0;
    char detail[512];
    bool hidden_target = false;
    int r;

    if (b->op == CFS_OP_STORE) {
        bytes = op_value(req, b, i, &len);
        if (!bytes) {
            return false;
        }
    }
    r = op_reach(req, b, &hidden_target);
    if (r == 0) {
        r = cfs_http_apply(txn, b->op, b->path, bytes ? bytes : b->arg, len);
    }
    free(bytes);
    if (r == 0) {
        return true;
    }
    {
        json_t *extra = json_object();
        char held[512] = "";
        char gone[320] = "";

        if (extra) {
            cfs_http_refusal(r, b->path, req->scope, extra, held, sizeof(held));
        }
        if (hidden_target) {
            (void)snprintf(
                gone, sizeof(gone), " (the target %s does not exist)", b->arg);
        } else if (b->op == CFS_OP_SYMLINK && r == -ENOENT) {
            cfs_http_missing_target(b->path, b->arg, gone, sizeof(gone));
        }
        (void)snprintf(detail,
                       sizeof(detail),
                       "op %zu (%s %s): %s%s%s",
                       i,
                       cfs_op_name(b->op),
                       b->path,
                       *cfs_schema_last_detail() ? cfs_schema_last_detail()
                                                 : strerror(-r),
                       held,
                       gone);
        json_object_set_new(extra, "op_index", json_integer((json_int_t)i));
        cfs_http_problem_json(req, 0, r, NULL, detail, extra);
    }
    return false;
}

/* Check the syntax of every op of @ops (numbered from @base) before
 * anything changes; with @leading, every compare comes before the first
 * other op. False: answered 400 with the op_index. */
static bool
ops_read(struct cfs_http_req *req, json_t *ops, size_t base, bool leading)
{
    bool changed = false;
    struct batch_op b;
    json_t *op;
    size_t i;

    json_array_foreach(ops, i, op) {
        if (!op_read(req, op, base + i, &b)) {
            return false;
        }
        if (leading && b.compare && changed) {
            batch_problem(req,
                          MHD_HTTP_BAD_REQUEST,
                          -EINVAL,
                          base + i,
                          "with \"else\", the compares of \"ops\" come "
                          "before its other ops (etcd's txn: compare, then "
                          "success or failure)");
            return false;
        }
        changed = changed || !b.compare;
    }
    return true;
}

/* With "else": do the leading compares of @ops all hold? @return 1, 0, or
 * -1 when one has no value to compare (answered). */
static int compares_hold(struct cfs_http_req *req, json_t *ops)
{
    struct batch_op b;
    json_t *op;
    size_t i;

    json_array_foreach(ops, i, op) {
        int r;

        (void)op_read(req, op, i, &b); /* checked before: it holds */
        if (!b.compare) {
            break;
        }
        r = compare_check(req, &b, i, false);
        if (r <= 0) {
            return r;
        }
    }
    return 1;
}

void cfs_http_handle_batch(struct cfs_http_req *req)
{
    json_t *body = cfs_http_json_body(req);
    json_t *ops, *elses, *run, *op, *ifrev, *results = NULL;
    struct cfs_txn *txn = NULL;
    struct batch_op b;
    size_t i, base = 0;
    bool succeeded = true;
    uint64_t rev;
    int r;

    if (!body) {
        return;
    }
    ops = json_object_get(body, "ops");
    elses = json_object_get(body, "else");
    ifrev = json_object_get(body, "if_revision");
    if (!cfs_http_known_members(
            req,
            body,
            (const char *const[]){"ops", "else", "if_revision", NULL})) {
        goto out;
    }
    if (!json_is_array(ops) || (elses && !json_is_array(elses)) ||
        (ifrev && !json_is_integer(ifrev))) {
        cfs_http_bad_request(req,
                             "the body is {\"ops\": [...], \"else\": "
                             "[...]?, \"if_revision\": N?}");
        goto out;
    }
    if (json_array_size(ops) + json_array_size(elses) > CFS_BATCH_MAX) {
        cfs_http_problem(req,
                         MHD_HTTP_CONTENT_TOO_LARGE,
                         -E2BIG,
                         NULL,
                         "at most %d operations per batch",
                         CFS_BATCH_MAX);
        goto out;
    }
    /* Check the syntax of every op before anything changes; the ops of
     * "else" are numbered after those of "ops". */
    if (!ops_read(req, ops, 0, elses != NULL) ||
        (elses && !ops_read(req, elses, json_array_size(ops), false))) {
        goto out;
    }

    r = cfs_txn_begin(&txn);
    if (r < 0) {
        cfs_http_problem(req, 0, r, NULL, "cannot start a transaction");
        goto out;
    }
    if (!cfs_http_if_match(req, cfs_revision())) { /* the tree's */
        cfs_txn_abort(txn);
        goto out;
    }
    if (ifrev && (uint64_t)json_integer_value(ifrev) != cfs_revision()) {
        cfs_http_problem(req,
                         MHD_HTTP_PRECONDITION_FAILED,
                         -ESTALE,
                         NULL,
                         "if_revision %lld is not the current revision %llu",
                         (long long)json_integer_value(ifrev),
                         (unsigned long long)cfs_revision());
        cfs_txn_abort(txn);
        goto out;
    }
    run = ops;
    if (elses) {
        /* under the same transaction as the branch that follows: nothing
         * can change between the compares and it */
        r = compares_hold(req, ops);
        if (r < 0) {
            cfs_txn_abort(txn);
            goto out;
        }
        if (r == 0) {
            succeeded = false;
            run = elses;
            base = json_array_size(ops);
        }
    }
    results = json_array();
    json_array_foreach(run, i, op) {
        json_t *res;

        (void)op_read(req, op, base + i, &b); /* checked above: it holds */
        if (b.compare ? compare_check(req, &b, base + i, true) != 1
                      : !op_run(req, txn, &b, base + i)) {
            cfs_txn_abort(txn);
            goto out;
        }
        res = json_object();
        json_object_set_new(
            res, "op", json_string(b.compare ? "compare" : cfs_op_name(b.op)));
        json_object_set_new(res, "path", json_string(b.path));
        json_object_set_new(res, "status", json_string("ok"));
        json_array_append_new(results, res);
    }
    rev = cfs_txn_revision(txn);
    if (!rev) {
        rev = cfs_revision();
    }
    r = cfs_http_commit(req, txn);
    if (r < 0) {
        goto out; /* answered by cfs_http_commit() */
    }
    {
        json_t *doc = json_object();

        json_object_set_new(doc, "revision", json_integer((json_int_t)rev));
        if (elses) {
            json_object_set_new(doc, "succeeded", json_boolean(succeeded));
        }
        json_object_set_new(doc, "results", results);
        results = NULL;
        cfs_http_reply_json(req, MHD_HTTP_OK, doc);
    }
out:
    json_decref(results);
    json_decref(body);
}

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Mutation smoke test: do the unit and integration suites notice a bug?

Plants each bug of a fixed list (MUTANTS below) in the source tree, one at
a time, builds in a build directory of its own (build-mutate, no -Werror,
so a planted bug that only warns still builds), runs the unit and
integration suites, and puts the file back. A mutant is KILLED when a test
fails, SURVIVED when every test passes; a patch that does not apply (its
snippet is not found exactly once) or a mutant that does not build is an
ERROR, never a kill. Prints one line per mutant and the score
killed / (killed + survived).

Run on demand, not in CI (a full run rebuilds and tests once per mutant):
    scripts/mutate.py                 every mutant
    scripts/mutate.py --list          the list, and whether each applies
    scripts/mutate.py --check         only check that every patch applies
    scripts/mutate.py ifmatch-mkdir   the named mutants
Exit status: 0 when every mutant was killed, 1 when one survived, 2 on an
error (a patch that did not apply, a build that failed).

A mutant may name the meson tests (and environment) that are to catch it
instead of the unit and integration suites, for a bug only the cluster
suite can bring about (the tree must pass them too, checked once).

A mutant names the files it may be in (globs: a file split in two keeps
working) and a snippet of code around the bug, matched with any whitespace
between tokens (reformatting keeps working) and with "cfs_" also matching
"cfs__" (internal renames keep working). The snippet must occur exactly
once across those files. Inside the snippet, `old` (matched the same way,
exactly once) becomes `new`.
"""

import argparse
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Mutant:
    def __init__(self, name, files, snippet, old, new, why, tests=None,
                 env=None):
        self.name = name
        self.files = files if isinstance(files, list) else [files]
        self.snippet = snippet
        self.old = old
        self.new = new
        self.why = why
        # a bug only a test outside the unit and integration suites can
        # catch (a cluster of real etcd members and nodes): those meson
        # tests, with @env, instead of the two suites
        self.tests = tests
        self.env = env or {}


# The planted bugs. The first six are five that once survived every test
# (weak tags and lists are two), the last of them
# planted as the tolerance that was removed: replay taking "the name is
# taken" for "already made".
MUTANTS = [
    Mutant("ifmatch-mkdir", "server/*.c",
           "rev = parent.revision; cfs_entry_done(&parent); if (!cfs_http_if_match(req, rev))",
           "if (!", "if (0 && !",
           "POST /config/{path} (mkdir) ignores If-Match: a stale tag creates the child"),
    Mutant("ifmatch-symlink", "server/*.c",
           "rev = dir.revision; cfs_entry_done(&dir); if (!cfs_http_if_match(req, rev))",
           "if (!", "if (0 && !",
           "a symlink PUT ignores If-Match: a stale tag creates the link"),
    Mutant("ifmatch-weak", "server/*.c",
           "(len > 2 && p[0] == 'W' && p[1] == '/' && len - 2 == strlen(etag)",
           "len > 2 &&", "0 &&",
           "If-Match no longer accepts a weak tag W/\"N\""),
    Mutant("ifmatch-list", "server/*.c",
           "memcmp(p + 2, etag, len - 2) == 0)) { return true; } p += len;",
           "p += len;", "break;",
           "If-Match looks at the first tag of a list only"),
    Mutant("undo-unlink-refusal-ignored", "core/src/*.c",
           "r = iops->allow_link(dir->item, t->item); cfs__callback_exit(); if (r != 0) { return r < 0 ? r : -EPERM; } cfs__tree_wrlock(); cfs__link_attach(link, t);",
           "if (r != 0) { return r < 0 ? r : -EPERM; }", "",
           "undoing an unlink ignores allow_link's refusal: the link silently comes back"),
    Mutant("replay-eexist-tolerated", "store/src/*.c",
           "r = cfs_symlink(rp->txn, st->path, st->arg); break;",
           "break;", "if (r == -EEXIST) { r = 0; } break;",
           "replay takes a link name that is taken for a link already made"),
    # ---- more of the same kinds: limits, checks, durability, the wire
    Mutant("events-since-wins", "server/*.c",
           "const char *s = last_id ? last_id : since_s;",
           "last_id ? last_id : since_s", "since_s ? since_s : last_id",
           "the event stream resumes from ?since= over Last-Event-ID (duplicates after a reconnect)"),
    Mutant("events-cursor-repeats", "server/*.c",
           "if (h->ring[(h->head + mid) % RING_CAP].rev <= cursor) {",
           "<=", "<",
           "a live stream looks again at the revision it already sent"),
    Mutant("core-name-max-off-by-one", "core/src/*.c",
           "if (len > CFS_NAME_MAX) { return -ENAMETOOLONG; }",
           "CFS_NAME_MAX)", "CFS_NAME_MAX + 1)",
           "a name one byte over the limit is accepted"),
    Mutant("core-store-max-off-by-one", "core/src/*.c",
           "if (len > CFS_STORE_MAX) { return -EFBIG; /* WR3 */",
           "CFS_STORE_MAX)", "CFS_STORE_MAX + 1)",
           "a value of 4096 bytes is stored (WR3 says 4095 at most)"),
    Mutant("core-rmdir-linked", "core/src/*.c",
           "if (d->links_to) { return -EBUSY; /* RM6 */ }",
           "return -EBUSY;", ";",
           "rmdir of a link target is allowed (RM6)"),
    Mutant("store-commit-error-dropped", "store/src/*.c",
           "if (r == 0) { r = store_step_done(s->st[ST_COMMIT]); }",
           "r = store_step_done", "(void)store_step_done",
           "a failed SQLite COMMIT is taken for success"),
    Mutant("store-apply-error-dropped", "store/src/*.c",
           "r = apply_change(s, c, sets[i].principal, time_us);",
           "r = apply_change", "(void)apply_change",
           "a change that could not be written is acknowledged anyway"),
    Mutant("store-sync-off", "store/src/*.c",
           "store->sync == CFS_STORE_SYNC_NORMAL ? \"NORMAL\" : \"FULL\"",
           "\"FULL\"", "\"OFF\"",
           "no fsync on commit: an acknowledged change may be lost at a crash"),
    Mutant("server-body-limit-off-by-one", "server/*.c",
           "req->body_len + n <= srv->opts.body_limit",
           "body_limit", "body_limit + 1",
           "a body one byte over the limit is taken, not 413"),
    Mutant("server-delete-reader-role", "server/*.c",
           "method == CFS_M_POST || method == CFS_M_PUT || method == CFS_M_DELETE",
           "|| method == CFS_M_DELETE", "",
           "DELETE needs only the reader role"),
    Mutant("server-import-writer-role", "server/*.c",
           "{\"/api/v1/import\", false, \"import\", POST, ADMIN,",
           "ADMIN", "READER",
           "import (replaces the whole tree) needs only the reader role"),
    Mutant("server-role-one-below", "server/*.c",
           "if (need == CFS_ROLE_NONE || have >= need)",
           "have >= need", "have + 1 >= need",
           "a token one role below the one needed is let through"),
    Mutant("server-symlink-no-etag", "server/*.c",
           "cfs_http_header(req, MHD_HTTP_HEADER_LOCATION, url); } cfs_http_etag(req, rev); free(url);",
           "cfs_http_etag(req, rev);", "",
           "a created link is answered without its ETag"),
    Mutant("server-link-get-no-etag", "server/*.c",
           "cfs_http_reply_json(req, MHD_HTTP_OK, l); cfs_http_etag(req, e->revision); }",
           "cfs_http_etag(req, e->revision);", "",
           "GET of a link is answered without its ETag"),
    Mutant("server-405-no-allow", "server/*.c",
           "cfs_http_header(req, MHD_HTTP_HEADER_ALLOW, list);",
           "cfs_http_header(req, MHD_HTTP_HEADER_ALLOW, list);", "",
           "a 405 without the Allow header"),
    Mutant("server-rename-no-etag", "server/*.c",
           "cfs_http_reply_json_text(req, MHD_HTTP_OK, text, text_len); if (rev) { cfs_http_etag(req, rev); }",
           "cfs_http_etag(req, rev);", "",
           "a rename is answered without the moved node's ETag"),
    Mutant("server-events-head-405", "server/*.c",
           "{\"/api/v1/events\", false, \"events\", READ,",
           "READ", "CFS_M(CFS_M_GET)",
           "HEAD on the event stream is 405 (every GET answers HEAD)"),
    # ---- what a red team's planted bugs showed untested (issue 27)
    Mutant("scope-export-links-unfiltered", "server/*.c",
           "if (!cfs_http_scope_covers(scope, n->links[i].target)) {",
           "if (!", "if (0 && !",
           "a scoped export lists a link whose target is outside its subtrees"),
    Mutant("scope-import-second-path-unchecked", "server/*.c",
           "!cfs_http_scope_reaches(req->scope, path2, true, ops[i].op == CFS_OP_SYMLINK)",
           "!cfs_http_scope_reaches(req->scope, path2,",
           "(0 && !cfs_http_scope_reaches(req->scope, path2,",
           "a scoped import may make a link to outside (or rename there): the "
           "second path of an op is not checked"),
    Mutant("scope-text-only", "server/*.c",
           "if (cfs_http_scope_reaches(req->scope, path, write, false)) { return true; }",
           "cfs_http_scope_reaches(req->scope, path, write, false)", "1",
           "a path through a link is judged as written: a scoped token reads "
           "and writes outside through a link"),
    Mutant("scope-link-target-unresolved", "server/*.c",
           "if (cfs_http_scope_reaches(req->scope, target, true, true)) {",
           "cfs_http_scope_reaches(req->scope, target, true, true)",
           "cfs_http_scope_covers(req->scope, target)",
           "a scoped token makes a link whose target leads outside through a link"),
    Mutant("throttle-ipv6-by-interface-id", "server/*.c",
           "memcpy(key + 1, a, 8); /* the /64 */",
           "a, 8", "a + 8, 8",
           "the wrong-token limit keys an IPv6 client by its interface id: a "
           "new address in the same /64 escapes it"),
    Mutant("throttle-retry-after-floor", "server/*.c",
           "wait = (unsigned int)((us + 999999u) / 1000000u);",
           "(us + 999999u)", "us",
           "Retry-After rounded down: 0 (or a second short) while still refused"),
    Mutant("core-unlink-backpointer-dangling", "core/src/*.c",
           "if (link->lnext) { link->lnext->lprev = link->lprev; }",
           "link->lnext->lprev = link->lprev;", "(void)0;",
           "removing the newest link to a target leaves the next one pointing "
           "back at it: used_by and the next unlink follow a removed link"),
    Mutant("stop-no-watchdog", "server/configfsd/*.c",
           "bool watching = pthread_create(&watchdog, NULL, stop_watchdog, set) == 0;",
           "pthread_create(&watchdog, NULL, stop_watchdog, set) == 0",
           "false && pthread_create(&watchdog, NULL, stop_watchdog, set) == 0",
           "a stop stuck on its log (or anything else) hangs until SIGKILL"),
    # ---- the etcd backend (tests/unit/test-store-etcd.c, on a fake etcd):
    # failures the cluster suite cannot bring about on purpose
    Mutant("etcd-snapshot-sha-skipped", "store/src/etcd/*.c",
           "if (all.n != ptr.length || strcmp(hex, ptr.sha256) != 0)",
           "|| strcmp(hex, ptr.sha256) != 0", "",
           "a snapshot part altered but kept its length is loaded by a starting node"),
    Mutant("etcd-chunks-deleted-on-timeout", "store/src/etcd/*.c",
           "if (r == -ESTALE && chunk_prefix[0])",
           "r == -ESTALE", "r < 0",
           "a chunked append that timed out deletes its chunks although its entry landed"),
    Mutant("etcd-trim-below-live-node", "store/src/etcd/*.c",
           "trim_log(e, low); *trimmed = low;",
           "trim_log(e, low)", "trim_log(e, snap)",
           "the log is trimmed below a node that is live but behind"),
    Mutant("etcd-watch-cut-not-stale", "store/src/etcd/*.c",
           "stale = e->error[0] || !e->watching || e->fell_behind;",
           "|| !e->watching", "",
           "reads are not marked stale while the watch is cut and reads answer"),
    Mutant("etcd-own-append-taken-for-conflict", "store/src/etcd/*.c",
           "!json_is_true(json_object_get(ans, \"succeeded\")) && !etcd_own_entry(etcd_range_kv(ans, 1), nonce)",
           "&& !etcd_own_entry(etcd_range_kv(ans, 1), nonce)", "",
           "an append whose answer was lost and that was sent again is taken for a lost race"),
    Mutant("read-answer-not-held", ["server/*.c", "server/wait/*.c"],
           "if (r != -EINPROGRESS) { return r == -EAGAIN && read_again(req); }",
           "r != -EINPROGRESS", "1",
           "a read is answered while a change it saw is not yet durable"),
    Mutant("read-open-txn-ignored", "core/src/*.c",
           "if (atomic_load(&low) <= mark->ticket) { return -EINPROGRESS; }",
           "atomic_load(&low) <= mark->ticket", "0",
           "core says a read is committed while a transaction it saw is open"),
    Mutant("read-undo-ignored", "core/src/*.c",
           "again = again || atomic_load(&stripes[mark->e[i].idx].undone) != mark->e[i].undone;",
           "again = again ||", "again = false &&",
           "a read that saw a change later undone is answered, not read again"),
    Mutant("read-torn-ignored", "core/src/*.c",
           "if (mark->torn) {", "mark->torn", "0",
           "a read during which another thread changed the tree is answered"),
    # ---- committed reads at their granularity (issue 35): a read waits
    # only for what it reads (tests/unit/test-core-visible.c,
    # integration.http-starve, integration.http-stop)
    Mutant("read-oldest-ticket-newest", "core/src/*.c",
           "if (!open_head) { atomic_store(&low, txn->ticket);",
           "if (!open_head)", "if (1)",
           "the oldest open ticket moves to the newest when a transaction "
           "starts: a read of what only the first of two open ones changed "
           "is answered, and its undone value comes back"),
    Mutant("read-torn-during-lock-ignored", "core/src/*.c",
           "if ((seq & 1) && atomic_load(&s->owner) != my_ticket) { m->torn = true;",
           "m->torn = true;", "(void)0;",
           "a read that began while another thread's transaction held the "
           "lock, between two of its changes, is answered half of it"),
    Mutant("read-module-show-item-local", "core/src/*.c",
           "if (sd && !show_item_local(sd)) {",
           "!show_item_local(sd)", "0 && !show_item_local(sd)",
           "a module's attribute is read as if its show() read only its item: "
           "a change elsewhere in the module is answered before it commits"),
    Mutant("read-undo-not-counted", "core/src/*.c",
           "cfs__vis_release(txn, true); cfs__vis_close(txn);",
           "cfs__vis_release(txn, true)", "cfs__vis_release(txn, false)",
           "an undone transaction does not count on what it touched: a held "
           "read of it is answered with the undone value"),
    Mutant("read-wait-not-reset", ["server/*.c", "server/wait/*.c"],
           "req->wait.sync_done = false; atomic_store(&req->wait.cstate, CS_RUNNING);",
           "req->wait.sync_done = false;", "",
           "a request waiting a second time while the server stops returns at "
           "once: a held read answered and freed while still on the list "
           "(the crash on stop under load)", tests=["integration.http-stop"]),
    Mutant("read-mount-not-waiting", "mount/*.c",
           "r = cfs_read_wait(rm);", "cfs_read_wait(rm)", "0",
           "the mount's reads do not wait for commits: read(2) of an attribute "
           "whose change is not durable answers the value that is then undone",
           tests=["mount.read"]),
    Mutant("read-locked-end-after-unlock", "server/*.c",
           "(void)cfs_read_end(&req->wait.rmark); cfs_read_unlock();",
           "(void)cfs_read_end(&req->wait.rmark);", "",
           "a read under the lock fixes what it read after letting go of it: "
           "a writer tears it again, and it runs under the lock again and again",
           tests=["integration.http-starve"]),
    # ---- the event stream (issue 26): every revision once, in order, whole,
    # named, or a reset; tests/integration/test-http-events-order.c and
    # t_events_across_faults of the cluster suite
    Mutant("events-gap-not-reset", "server/*.c",
           "if (i == h->count || e->rev != c->cursor + 1 || e->index != 0) { reset_event(",
           "e->rev != c->cursor + 1", "e->rev <= c->cursor",
           "a stream goes past a revision missing from the ring (given up, or "
           "dropped) without a reset: a silent gap"),
    Mutant("events-cut-revision-sent", "server/*.c",
           "if (i == h->count || e->rev != c->cursor + 1 || e->index != 0) { reset_event(",
           "|| e->index != 0", "",
           "the ring let go of the first records of the revision right after a "
           "stream's cursor: the stream gets its tail as if it were all"),
    Mutant("events-early-revision-sent", "server/*.c",
           "if (rev == h->last + 1) { push_batch(h, b); } else {",
           "rev == h->last + 1", "rev > h->last",
           "a revision published before the one before it goes to the streams "
           "at once, out of order, instead of waiting for it"),
    Mutant("events-backlog-cut-revision", "server/*.c",
           "if (n == BACKLOG_MAX && es[n - 1].revision > since) {",
           "n == BACKLOG_MAX", "0 && n == BACKLOG_MAX",
           "a resume from far back gets the first revision it needs in part (the "
           "journal read stopped at its limit inside it), its count saying that "
           "part is all"),
    Mutant("events-name-on-last-record-only", "server/*.c",
           "JW_LIT(w, \"event: \"); jw_raw(w, cfs_op_name(op), strlen(cfs_op_name(op)));",
           "strlen(cfs_op_name(op))", "index + 1 == count ? strlen(cfs_op_name(op)) : 0",
           "the records of a revision but its last one come with an empty event name"),
    Mutant("events-remote-lost-at-start", "server/configfsd/*.c",
           "pthread_mutex_lock(&g_srv_lock); r = cfs_http_server_start(&hopts, &srv);",
           "pthread_mutex_lock(&g_srv_lock); r = cfs_http_server_start(&hopts, &srv);",
           "r = cfs_http_server_start(&hopts, &srv); usleep(30000); "
           "pthread_mutex_lock(&g_srv_lock);",
           "cluster mode: change sets another node made, applied while the server "
           "starts, never reach its event stream (the window as it was, widened)",
           tests=["cluster.etcd"], env={"CFS_CLUSTER_TESTS": "t_events_across_faults"}),
    Mutant("forward-answer-trailing-taken", "server/*.c",
           "if (r == 0 && p != end) { r = -EINVAL;",
           "p != end", "0",
           "a writer's batch answer with trailing bytes or more answers than requests is taken"),
    # ---- the mount (issue 37): only the mount suite can bring these about
    Mutant("mount-stale-fd-namesake", "mount/*.c",
           "r = change(M_STORE, fh_path(path, fi), NULL, buf, size, &f->created, NULL);",
           "&f->created", "NULL",
           "a write on a file whose item was removed and made again stores "
           "into the namesake (WR7)",
           tests=["mount.errno"]),
    Mutant("mount-cwd-as-text", "mount/*.c",
           "if (!m->have_dev || read_views(m, pid, c) != 0 || c->n == 0) {",
           "!m->have_dev ||", "1 ||",
           "the caller's mounts of the tree are not read: its cwd is compared, "
           "as text, with the daemon's mount point (a bind mount is EPERM)",
           tests=["mount.scripts"]),
    Mutant("mount-eloop-one-early", "mount/resolve.c",
           "if (++links > RESOLVE_MAX_LINKS) {",
           ">", ">=",
           "symlink(2) resolving its target fails ELOOP at the 40th link "
           "(the kernel follows 40)",
           tests=["mount-resolve"]),
    Mutant("mount-efbig-at-max", "mount/*.c",
           "(f->max_size && (size_t)off + size > f->max_size)",
           "size >", "size >=",
           "a binary write ending exactly at cb_max_size is refused EFBIG (BIN4)",
           tests=["mount.errno"]),
    # ---- formatted numbers and query values (issue 37 (1), (7)):
    # tests/unit/test-schema-format.c, test-schema-value.c,
    # tests/integration/test-http-import.c and test-http-harden.c
    Mutant("format-leading-text-kept", "schema/src/*.c",
           "i = strlen(a->fmt_pre); end = len - strlen(a->fmt_post);",
           "i = strlen(a->fmt_pre);", "i = 0;",
           "a format's leading text is not stripped from the shown form: \"id ff\" "
           "of \"id %x\" is refused, \"0x42\" of \"0x%d\" read as 66"),
    Mutant("format-shown-base-decimal", "schema/src/*.c",
           "ret->base = a->fmt_conv == 'x' || a->fmt_conv == 'X' ? 16 : 10;",
           "a->fmt_conv == 'x' || a->fmt_conv == 'X' ? 16 : 10", "10",
           "the shown form is read in decimal, not in the format's base: "
           "\"10\" of \"%x\" stores ten, \"ff\" is refused"),
    Mutant("query-enum-single-node", "server/*.c",
           "if (q->route ? strcmp(q->route, rt->label) != 0 : !rt->read_index) {",
           "!rt->read_index", "!rt->read_index || !req->srv->cluster",
           "?consistency= is validated in cluster mode only: on one node bogus, "
           "LINEARIZABLE and the empty value answer 200"),
    # ---- what planted bugs in the last round's code showed untested
    # (issue 37): features tested on their main path, not at their edges
    Mutant("scope-ancestor-link-followed", "server/*.c",
           "if (!e.target || !cfs_http_scope_covers(s, e.target)) {",
           "cfs_http_scope_covers(s, e.target)", "cfs_http_scope_sees(s, e.target)",
           "a link to an ancestor of a scoped token's subtree is followed and "
           "shown, not hidden (its target is only above the subtree)"),
    Mutant("scope-compare-hidden-link", "server/*.c",
           "r = op_reach(req, b, &hidden_target); if (r == 0) { r = cfs_stat(b->path, &e); }",
           "if (r == 0) { r = cfs_stat(b->path, &e); }", "r = cfs_stat(b->path, &e);",
           "a batch compare through a link hidden from a scoped token reads "
           "the value outside: 200 for the right value, 412 for a wrong one"),
    Mutant("compare-else-first-only", "server/*.c",
           "r = compare_check(req, &b, i, false); if (r <= 0) { return r; }",
           "if (r <= 0) { return r; }", "return r;",
           "with else, only the first of several leading compares decides "
           "which branch runs"),
    Mutant("paging-name-from-unpaged", "server/*.c",
           "bool seek = limit || after || before || from || name_from || contains;",
           "|| name_from", "",
           "?name_from= without limit is not paged: every child, from the first"),
    Mutant("import-fallback-plan-unlocked", "server/*.c",
           "r = cfs_txn_begin(ret_txn); if (r == 0) { r = plan_tree(path, want, dm, ret_ops, ret_n); }",
           "r = cfs_txn_begin(ret_txn); if (r == 0) { r = plan_tree(path, want, dm, ret_ops, ret_n); }",
           "r = plan_tree(path, want, dm, ret_ops, ret_n); if (r == 0) { r = cfs_txn_begin(ret_txn); }",
           "an import's plan from the live tree is made before the mutation "
           "lock is taken: a writer in between is overwritten or fails it"),
    Mutant("events-held-twice", "server/*.c",
           "if (rev <= h->last || dup) {",
           "|| dup", "",
           "a revision published twice while it waits is held twice: the "
           "second, given up later, takes the hub's last revision back"),
    Mutant("events-restart-resume-reset", "server/*.c",
           "first = !h->count ? h->last + 1",
           "h->last + 1", "h->last",
           "with an empty ring (after a restart) a resume is served from the "
           "journal short of the last revision, which comes as a reset"),
    # ---- configfsctl (issue 37): completion, the bound on a command's
    # answers, terminal safety, failover, the shell's paths; cli.complete,
    # cli.hostile and cli.shell (tests/cli)
    Mutant("cli-completion-unquoted", "cli/*.c",
           "\"    printf -v q '%q' \\\"$c\\\"\\n\"",
           "printf -v q '%q' \\\"$c\\\"", "q=$c",
           "bash completion inserts a child's name unquoted: $(...) or a;cmd in "
           "a name runs in the completing user's shell"),
    Mutant("cli-pages-bytes-per-answer", "cli/*.c",
           "r->len > SIZE_MAX - c->answered ? SIZE_MAX : c->answered + r->len;",
           "c->answered + r->len", "0",
           "--max-answer bounds each page alone: a server whose every page "
           "carries next_after is followed on and on"),
    Mutant("cli-cursor-progress-unchecked", "cli/*.c",
           "strcmp(jstr(page, \"next_after\"), jstr(node, \"next_after\")) <= 0) {",
           "strcmp(", "0 && strcmp(",
           "a next_after that does not advance is followed again (the same "
           "page, over and over)"),
    Mutant("cli-parsed-memory-unbounded", "cli/*.c",
           "if (jmem.max && jmem.parsing && (n > jmem.max || held > jmem.max - n)) {",
           "jmem.max &&", "0 &&",
           "the parsed answer's memory is not bounded: 1.9 MB of [{},...] "
           "takes 155 MB under --max-answer 2M"),
    Mutant("cli-bidi-isolates-raw", "cli/*.c",
           "|| (cp >= 0x2066 && cp <= 0x2069);",
           "|| (cp >= 0x2066 && cp <= 0x2069)", "",
           "the bidi isolates U+2066-U+2069 reach the terminal raw"),
    Mutant("cli-write-failover-after-connect", "cli/*.c",
           "return !r->write || !r->sent;",
           "!r->write || !r->sent", "true",
           "a write that reached a server and got no answer is sent to the "
           "next one too (applied twice)"),
    Mutant("cli-write-on-reused-connection", "cli/*.c",
           "curl_easy_setopt(c->curl, CURLOPT_FRESH_CONNECT, 1L);",
           "curl_easy_setopt(c->curl, CURLOPT_FRESH_CONNECT, 1L);", "",
           "a write goes on a reused connection: libcurl sends it again itself "
           "when that connection dies unanswered (mv's rename twice)"),
    Mutant("cli-attr-value-resolved", "cli/*.c",
           "return a && a[1] == '\\0';",
           "a[1] == '\\0'", "0",
           "the shell (and --cwd) resolves the NAME=VALUE after -a as a path"),
]


# ---- matching ---------------------------------------------------------------

TOKEN = re.compile(r"[A-Za-z_0-9]+|\S")


def pattern(snippet):
    """A regex for @snippet: any whitespace between tokens (none needed
    between punctuation), "cfs_" also matching "cfs__"."""
    parts = []
    prev_word = False
    for tok in TOKEN.findall(snippet):
        word = tok[0].isalnum() or tok[0] == "_"
        if parts:
            parts.append(r"\s+" if (word and prev_word) else r"\s*")
        if word and tok.startswith("cfs_"):
            parts.append("cfs__?" + re.escape(tok[4:]))
        else:
            parts.append(re.escape(tok))
        prev_word = word
    return re.compile("".join(parts))


class NotApplied(Exception):
    pass


def locate(m):
    """(path, text, match) of the one place @m's snippet is; NotApplied
    when it is nowhere or in more than one place."""
    rx = pattern(m.snippet)
    hits = []
    files = sorted({f for g in m.files for f in glob.glob(os.path.join(ROOT, g))})
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        hits += [(path, text, x) for x in rx.finditer(text)]
    if len(hits) != 1:
        where = ", ".join(sorted({os.path.relpath(h[0], ROOT) for h in hits}))
        raise NotApplied(f"snippet found {len(hits)} times in {' '.join(m.files)}"
                         + (f" ({where})" if where else ""))
    return hits[0]


def mutated(m):
    """(path, original text, mutated text)."""
    path, text, hit = locate(m)
    inner = list(pattern(m.old).finditer(hit.group(0)))
    if len(inner) != 1:
        raise NotApplied(f"'{m.old}' found {len(inner)} times in the snippet")
    a = hit.start() + inner[0].start()
    b = hit.start() + inner[0].end()
    new = text[:a] + m.new + text[b:]
    if new == text:
        raise NotApplied("the patch changes nothing")
    return path, text, new


# ---- running ----------------------------------------------------------------

CHILD = None  # the build or test run going on, in a process group of its own


def stop_child():
    if CHILD and CHILD.poll() is None:
        os.killpg(CHILD.pid, signal.SIGTERM)
        try:
            CHILD.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(CHILD.pid, signal.SIGKILL)
            CHILD.wait()


def run(cmd, log, timeout, env=None):
    """@cmd's exit status, or -1 when it ran over @timeout seconds."""
    global CHILD
    with open(log, "w") as out:
        CHILD = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True,
                                 env=dict(os.environ, **env) if env else None)
        try:
            return CHILD.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_child()
            return -1
        finally:
            CHILD = None


def failed_tests(build):
    names = []
    try:
        with open(os.path.join(build, "meson-logs", "testlog.json")) as f:
            for line in f:
                t = json.loads(line)
                # INTERRUPT: stopped by --maxfail, not failed
                if t.get("result") not in ("OK", "SKIP", "EXPECTEDFAIL", "INTERRUPT"):
                    names.append(t["name"].split(" / ")[-1])
    except (OSError, ValueError):
        pass
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", help="run only these mutants")
    ap.add_argument("--list", action="store_true", help="list the mutants and whether each applies")
    ap.add_argument("--check", action="store_true", help="only check that every patch applies")
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build-mutate"))
    ap.add_argument("--keep-going", action="store_true",
                    help="run every test of a killed mutant too (default: stop at the first failure)")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds per test run")
    ap.add_argument("--jobs", "-j", type=int, default=0,
                    help="ninja's parallel jobs (default: ninja's own), on a shared machine")
    args = ap.parse_args()

    chosen = MUTANTS
    if args.names:
        known = {m.name for m in MUTANTS}
        bad = [n for n in args.names if n not in known]
        if bad:
            sys.exit(f"mutate: no mutant {' '.join(bad)}; --list shows them")
        chosen = [m for m in MUTANTS if m.name in args.names]

    if args.list or args.check:
        errors = 0
        for m in chosen:
            try:
                path, _, _ = mutated(m)
                state = f"applies to {os.path.relpath(path, ROOT)}"
            except NotApplied as e:
                state = f"ERROR patch did not apply: {e}"
                errors += 1
            print(f"{m.name:32} {state}" + (f"\n{'':32} {m.why}" if args.list else ""))
        sys.exit(2 if errors else 0)

    build = args.build_dir
    log_dir = os.path.join(build, "mutate-logs")
    if not os.path.isdir(os.path.join(build, "meson-private")):
        print(f"mutate: meson setup {os.path.relpath(build, ROOT)}", flush=True)
        # the project defaults to werror=true; a mutant that only warns
        # must still build
        if subprocess.run(["meson", "setup", build, "-Dwerror=false"], cwd=ROOT,
                          stdout=subprocess.DEVNULL).returncode != 0:
            sys.exit("mutate: meson setup failed")
    os.makedirs(log_dir, exist_ok=True)
    nice = ["nice"] if shutil.which("nice") else []
    ninja = ["ninja", "-C", build] + (["-j", str(args.jobs)] if args.jobs else [])
    test_cmd = nice + ["meson", "test", "-C", build, "--no-rebuild", "--suite", "unit",
                       "--suite", "integration"]
    if not args.keep_going:
        test_cmd += ["--maxfail", "1"]

    # the unmutated tree must build and pass, or every mutant is "killed";
    # the two suites only when a chosen mutant is judged by them (a
    # mutant naming its own tests checks those once, below)
    print("mutate: the tree as it is: build and test", flush=True)
    if run(nice + ninja, os.path.join(log_dir, "baseline-build.log"), 3600) != 0:
        sys.exit(f"mutate: the tree does not build (see {log_dir}/baseline-build.log)")
    if any(not m.tests for m in chosen) and \
            run(test_cmd, os.path.join(log_dir, "baseline-test.log"), args.timeout) != 0:
        sys.exit(f"mutate: the tree fails its tests without a mutant: {' '.join(failed_tests(build))}")

    def own_cmd(m):
        """The test command of a mutant with tests of its own."""
        return nice + ["meson", "test", "-C", build, "--no-rebuild"] + m.tests

    own_ok = set()  # (tests, env) the tree as it is passes

    def own_baseline(m):
        key = (tuple(m.tests), tuple(sorted(m.env.items())))
        if key in own_ok:
            return True
        log = os.path.join(log_dir, f"baseline-{m.name}.test.log")
        if run(own_cmd(m), log, args.timeout, m.env) != 0:
            return False
        own_ok.add(key)
        return True

    current = {}  # path -> original text, while a mutant is planted

    def restore():
        for p, t in current.items():
            with open(p, "w", encoding="utf-8") as f:
                f.write(t)
        current.clear()

    def on_signal(signum, frame):
        planted = " ".join(os.path.relpath(p, ROOT) for p in current)
        stop_child()
        restore()
        sys.exit(f"mutate: interrupted; {planted or 'nothing was planted'} restored")

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    killed, survived, errors = [], [], []
    for i, m in enumerate(chosen, 1):
        t0 = time.time()
        head = f"[{i}/{len(chosen)}] {m.name:32}"
        try:
            path, orig, new = mutated(m)
        except NotApplied as e:
            print(f"{head} ERROR    patch did not apply: {e}", flush=True)
            errors.append(m.name)
            continue
        if m.tests and not own_baseline(m):
            print(f"{head} ERROR    the tree fails {' '.join(m.tests)} without a mutant",
                  flush=True)
            errors.append(m.name)
            continue
        try:
            current[path] = orig
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
            blog = os.path.join(log_dir, f"{m.name}.build.log")
            if run(nice + ninja, blog, 3600) != 0:
                print(f"{head} ERROR    the mutant does not build (see {blog})", flush=True)
                errors.append(m.name)
                continue
            rc = run(own_cmd(m) if m.tests else test_cmd,
                     os.path.join(log_dir, f"{m.name}.test.log"), args.timeout, m.env)
            secs = time.time() - t0
            if rc != 0:
                by = failed_tests(build) or ["timeout" if rc == -1 else "?"]
                print(f"{head} KILLED   by {', '.join(by)} ({secs:.0f} s)", flush=True)
                killed.append(m.name)
            else:
                print(f"{head} SURVIVED {m.why} ({secs:.0f} s)", flush=True)
                survived.append(m.name)
        finally:
            restore()

    # leave build-mutate built from the tree as it is
    run(nice + ninja, os.path.join(log_dir, "final-build.log"), 3600)
    total = len(killed) + len(survived)
    score = 100.0 * len(killed) / total if total else 0.0
    print(f"mutate: {len(killed)} killed, {len(survived)} survived, {len(errors)} errors;"
          f" score {len(killed)}/{total} = {score:.0f}%")
    if survived:
        print(f"mutate: survived: {' '.join(survived)}")
    if errors:
        print(f"mutate: errors: {' '.join(errors)}")
    sys.exit(2 if errors else 1 if survived else 0)


if __name__ == "__main__":
    main()

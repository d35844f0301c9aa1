/* SPDX-License-Identifier: MIT */
/*
 * paths.c - config paths typed relative to a working directory: the
 * shell's (cd) and the plain CLI's (--cwd, CONFIGFSCTL_CWD). One resolver
 * for both, so that a line means the same in a script and in the shell.
 *
 * An argument that names a config path and does not start with '/' is
 * taken from the working directory, with . and .. resolved, before the
 * command sees it; for `ln -s TARGET LINK` that includes TARGET, which is
 * how configfs resolves a relative target (from the caller's working
 * directory: fs/configfs/symlink.c looks it up with kern_path), not from
 * LINK's folder as ln -s on another filesystem would. Arguments that are
 * values or local files (write's VALUE, batch and import's FILE) and
 * option values are left alone. A path whose .. climbs above the root
 * names nothing of configfs (above /sys/kernel/config): it is refused
 * here, as configfs refuses a link to outside its tree (EPERM).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "ctl.h"

char *ctl_resolve_path(const char *dir, const char *rel)
{
    char *joined =
        rel[0] == '/' ? ctl_xstrdup(rel) : ctl_strdup_printf("%s/%s", dir, rel);
    char *out = ctl_xmalloc(strlen(joined) + 2);
    size_t o = 0;
    char *save = NULL;

    for (char *seg = strtok_r(joined, "/", &save); seg;
         seg = strtok_r(NULL, "/", &save)) {
        if (strcmp(seg, ".") == 0) {
            continue;
        }
        if (strcmp(seg, "..") == 0) {
            if (o == 0) { /* above the root: out of configfs */
                free(out);
                free(joined);
                return NULL;
            }
            while (out[o - 1] != '/') {
                o--;
            }
            o--;
            continue;
        }
        out[o++] = '/';
        memcpy(out + o, seg, strlen(seg));
        o += strlen(seg);
    }
    if (o == 0) {
        out[o++] = '/';
    }
    out[o] = '\0';
    free(joined);
    return out;
}

int ctl_above_root(const char *what, const char *dir, const char *rel)
{
    (void)fprintf(stderr,
                  "configfsctl: %s%s%s: from %s it climbs above the root, out "
                  "of the configfs tree: Operation not permitted\n",
                  what ? what : "",
                  what ? " " : "",
                  ctl_esc(rel),
                  ctl_esc(dir));
    return ctl_exit_errno(EPERM);
}

/* Does the option word @w take the next word as its value? A cluster of
 * short options ("-a", "-pa") does when it ends in -a, the one short
 * option with a value (getopt: "-aNAME=V" holds it, "-pa NAME=V" does
 * not): that value is a NAME=VALUE, never a path to resolve. */
static bool takes_value(const char *w)
{
    const struct option *lo = ctl_long_options();

    if (w[0] == '-' && w[1] != '-') {
        const char *a = strchr(w + 1, 'a');

        return a && a[1] == '\0';
    }
    if (strncmp(w, "--", 2) != 0 || strchr(w, '=')) {
        return false;
    }
    for (; lo->name; lo++) {
        if (strcmp(w + 2, lo->name) == 0) {
            return lo->has_arg == required_argument;
        }
    }
    return false;
}

/* Which arguments of @cmd are config paths: all, the first only, none. */
enum paths { PATHS_ALL, PATHS_FIRST, PATHS_NONE };

static enum paths paths_of(const char *cmd)
{
    static const char *const none[] = {"batch",
                                       "import",
                                       "health",
                                       "cluster",
                                       "completion",
                                       "shell",
                                       "__complete",
                                       NULL};

    if (strcmp(cmd, "write") == 0) {
        return PATHS_FIRST;
    }
    for (size_t i = 0; none[i]; i++) {
        if (strcmp(cmd, none[i]) == 0) {
            return PATHS_NONE;
        }
    }
    return PATHS_ALL;
}

/* The commands whose PATH is optional: the working directory when none
 * is given. */
static bool path_optional(const char *cmd)
{
    static const char *const opt[] = {
        "ls", "tree", "export", "history", "watch", NULL};

    for (size_t i = 0; opt[i]; i++) {
        if (strcmp(cmd, opt[i]) == 0) {
            return true;
        }
    }
    return false;
}

int ctl_resolve_args(const char *cwd, char ***pv, int n, bool parsed)
{
    char **v = *pv;
    enum paths which = paths_of(v[0]);
    bool after_dashes = parsed;
    bool asks_help = false;
    int seen = 0;

    for (size_t i = 1; v[i] && which != PATHS_NONE; i++) {
        char *abs;
        size_t len;

        if (!after_dashes && strcmp(v[i], "--") == 0) {
            after_dashes = true;
            continue;
        }
        if (!after_dashes && v[i][0] == '-' && v[i][1]) {
            asks_help = asks_help || strcmp(v[i], "--help") == 0 ||
                        strcmp(v[i], "-h") == 0;
            if (takes_value(v[i]) && v[i + 1]) {
                i++;
            }
            continue;
        }
        if (which == PATHS_FIRST && seen) {
            continue;
        }
        seen++;
        len = strlen(v[i]);
        abs = ctl_resolve_path(cwd, v[i]);
        if (!abs) {
            return -ctl_above_root(v[0], cwd, v[i]);
        }
        /* a trailing '/' is kept: it means something to ln and mv */
        if (len && v[i][len - 1] == '/' && strcmp(abs, "/") != 0) {
            char *slashed = ctl_strdup_printf("%s/", abs);

            free(abs);
            abs = slashed;
        }
        free(v[i]);
        v[i] = abs;
    }
    if (!seen && !asks_help && path_optional(v[0])) {
        v = ctl_xrealloc(v, ((size_t)n + 2) * sizeof(*v));
        v[n++] = ctl_xstrdup(cwd);
        v[n] = NULL;
        *pv = v;
    }
    return n;
}

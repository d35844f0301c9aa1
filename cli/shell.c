/* SPDX-License-Identifier: MIT */
/*
 * shell.c - `configfsctl shell`, an interactive shell over one server (or
 * the --server list), as targetcli is over the kernel's configfs: a
 * working directory (cd, pwd), every configfsctl command with its paths
 * taken relative to it, tab completion of commands and of paths (asked
 * from the server, as the completion scripts do), and history kept in
 * ~/.configfsctl_history. Line editing is libedit's (its readline
 * interface: BSD-licensed, in Debian).
 *
 * Paths: the arguments that name config paths are resolved from the
 * working directory before the command sees them, `ln -s` targets
 * included, as configfs resolves them (paths.c, which --cwd uses too).
 * It starts in --cwd's folder (or CONFIGFSCTL_CWD's) when given.
 *
 * Read from something that is not a terminal, it runs the lines given, one
 * command each, without prompt or history, and exits with the status of
 * the last command (or the first `exit N`).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <editline/readline.h>

#include "cmds.h"
#include "ctl.h"

/* The shell's state; one shell per process (readline's callbacks). */
static struct shell {
    struct ctl *c;
    char *cwd; /* absolute, no trailing '/' but for the root */
    char *history_file;
} sh;

static const char *const builtins[] = {
    "cd", "pwd", "history", "help", "exit", "quit", NULL};

/* ---- words ---------------------------------------------------------- */

/* Split @line into words: blanks separate, '...' and "..." quote, \
 * escapes the next character. NULL-terminated new array in *ret.
 * @return the number of words, or -1 for an unclosed quote. */
static int split(const char *line, char ***ret)
{
    char **v = ctl_xmalloc(sizeof(*v));
    size_t n = 0;
    const char *p = line;

    v[0] = NULL;
    for (;;) {
        char *w;
        size_t len = 0;
        char quote = 0;

        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
            p++;
        }
        if (!*p) {
            break;
        }
        w = ctl_xmalloc(strlen(p) + 1);
        for (; *p; p++) {
            if (quote) {
                if (*p == quote) {
                    quote = 0;
                } else if (*p == '\\' && quote == '"' && p[1]) {
                    w[len++] = *++p;
                } else {
                    w[len++] = *p;
                }
            } else if (*p == '\'' || *p == '"') {
                quote = *p;
            } else if (*p == '\\' && p[1]) {
                w[len++] = *++p;
            } else if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
                break;
            } else {
                w[len++] = *p;
            }
        }
        w[len] = '\0';
        v = ctl_xrealloc(v, (n + 2) * sizeof(*v));
        v[n++] = w;
        v[n] = NULL;
        if (quote) {
            ctl_strv_free(v);
            return -1;
        }
    }
    *ret = v;
    return (int)n;
}

/* ---- builtins ------------------------------------------------------- */

static int cd(char **v, int n)
{
    char *to = ctl_resolve_path(sh.cwd, n > 1 ? v[1] : "/");
    char *url;
    struct ctl_resp r;
    json_t *node = NULL;
    int ex;

    if (!to) {
        return ctl_above_root("cd", sh.cwd, v[1]);
    }
    url = ctl_config_url(to);
    ex = ctl_request(sh.c, "GET", url, NULL, NULL, 0, NULL, &r);
    if (ex == 0 && !ctl_ok(&r)) {
        ex = ctl_fail(sh.c, to, &r);
    } else if (ex == 0) {
        /* a folder answers JSON with a kind; an attribute its bytes */
        node = json_loadb(r.body, r.len, 0, NULL);
        if (!json_is_string(json_object_get(node, "kind")) ||
            json_object_get(node, "target")) {
            (void)fprintf(stderr, "cd: %s: Not a directory\n", to);
            ex = ctl_exit_errno(ENOTDIR);
        }
    }
    if (ex == 0) {
        free(sh.cwd);
        sh.cwd = to;
        to = NULL;
    }
    json_decref(node);
    ctl_resp_done(&r);
    free(url);
    free(to);
    return ex;
}

static void help(void)
{
    (void)printf(
        "Commands: cd [PATH], pwd, history, help, exit [N], and every\n"
        "configfsctl command (configfsctl --help), with PATHs relative to\n"
        "the working directory: ls, tree, cat, write, mkdir, rmdir,\n"
        "ln -s, rm, mv, batch, export, import, history, watch, health,\n"
        "cluster. COMMAND --help for one. Tab completes commands and paths.\n");
}

static void print_history(void)
{
    for (int i = 0; i < history_length; i++) {
        const HIST_ENTRY *e = history_get(history_base + i);

        if (e && e->line) {
            (void)printf("%5d  %s\n", history_base + i, e->line);
        }
    }
}

/* Run one line. @return its status; *quit set by exit. */
static int run_line(const char *line, bool *quit)
{
    char **v = NULL;
    int n = split(line, &v);
    int ex = 0;

    if (n < 0) {
        (void)fprintf(stderr, "configfsctl: unclosed quote\n");
        return CTL_EX_USAGE;
    }
    if (n == 0) {
        ctl_strv_free(v);
        return 0;
    }
    ctl_budget_begin(sh.c); /* each line its own --max-answer */
    if (strcmp(v[0], "exit") == 0 || strcmp(v[0], "quit") == 0) {
        char *end = NULL;
        long status = n > 1 ? strtol(v[1], &end, 10) : 0;

        *quit = true;
        if (n > 1 && (*end || status < 0 || status > 255)) {
            (void)fprintf(stderr, "exit: a status from 0 to 255\n");
            status = CTL_EX_USAGE;
        }
        ex = (int)status;
    } else if (strcmp(v[0], "cd") == 0) {
        ex = n > 2 ? (fprintf(stderr, "cd: one path\n"), CTL_EX_USAGE)
                   : cd(v, n);
    } else if (strcmp(v[0], "pwd") == 0) {
        (void)printf("%s\n", sh.cwd);
    } else if (strcmp(v[0], "help") == 0) {
        help();
    } else if (strcmp(v[0], "history") == 0 && n == 1) {
        print_history();
    } else if (strcmp(v[0], "shell") == 0) {
        (void)fprintf(stderr, "configfsctl: already a shell\n");
        ex = CTL_EX_USAGE;
    } else {
        char **argv;

        n = ctl_resolve_args(sh.cwd, &v, n, false);
        if (n < 0) {
            ctl_strv_free(v);
            return -n;
        }
        argv = ctl_xmalloc(((size_t)n + 2) * sizeof(*argv));
        argv[0] = (char *)"configfsctl";
        memcpy(argv + 1, v, ((size_t)n + 1) * sizeof(*argv));
        ex = ctl_run_line(sh.c, n + 1, argv);
        free(argv);
        (void)fflush(stdout);
    }
    ctl_strv_free(v);
    return *quit ? ex : ctl_budget_end(sh.c, ex);
}

/* ---- completion ----------------------------------------------------- */

static char **matches;
static size_t next_match;

static char *next_completion(const char *text, int state)
{
    (void)text;
    if (state == 0) {
        next_match = 0;
    }
    if (!matches || !matches[next_match]) {
        return NULL;
    }
    return strdup(matches[next_match++]); /* readline frees it */
}

static void add_match(char ***v, size_t *n, const char *s)
{
    *v = ctl_xrealloc(*v, (*n + 2) * sizeof(**v));
    (*v)[(*n)++] = ctl_xstrdup(s);
    (*v)[*n] = NULL;
}

static char **complete(const char *text, int start, int end)
{
    size_t n = 0;
    int ex;

    (void)end;
    ctl_strv_free(matches);
    matches = NULL;
    rl_attempted_completion_over = 1; /* no file names */
    rl_completion_append_character = '\0';
    if (start == 0 || strspn(rl_line_buffer, " \t") == (size_t)start) {
        for (size_t i = 0; builtins[i]; i++) {
            if (strncmp(builtins[i], text, strlen(text)) == 0) {
                add_match(&matches, &n, builtins[i]);
            }
        }
        for (size_t i = 0; ctl_cmd_name(i); i++) {
            const char *name = ctl_cmd_name(i);

            if (name[0] != '_' && strcmp(name, "shell") != 0 &&
                strcmp(name, "history") != 0 &&
                strncmp(name, text, strlen(text)) == 0) {
                add_match(&matches, &n, name);
            }
        }
    } else if (text[0] != '-') {
        ctl_budget_begin(sh.c);
        matches = ctl_complete_names(sh.c, sh.cwd, text, &ex);
    }
    if (!matches) {
        return NULL;
    }
    return rl_completion_matches(text, next_completion);
}

/* ---- the loop ------------------------------------------------------- */

static char *prompt(void)
{
    return ctl_strdup_printf("configfsctl:%s> ", sh.cwd);
}

int ctl_cmd_shell(struct ctl *c, const struct opts *o, int argc, char **argv)
{
    bool tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
    bool quit = false;
    const char *home = getenv("HOME");
    int ex = 0;

    (void)o;
    (void)argc;
    (void)argv;
    sh.c = c;
    sh.cwd = ctl_xstrdup("/");
    if (c->cwd) { /* --cwd: start there, if it is a folder */
        char *v[] = {(char *)"cd", c->cwd, NULL};

        ex = cd(v, 2);
        if (ex) {
            free(sh.cwd);
            memset(&sh, 0, sizeof(sh));
            return ex;
        }
    }
    c->schemas = json_object(); /* ls shows summaries, read once each */
    if (tty) {
        rl_readline_name = "configfsctl";
        rl_attempted_completion_function = complete;
        using_history();
        if (home && home[0]) {
            sh.history_file =
                ctl_strdup_printf("%s/.configfsctl_history", home);
            (void)read_history(sh.history_file);
        }
    }
    while (!quit) {
        char *line = NULL;

        if (tty) {
            char *p = prompt();

            line = readline(p);
            free(p);
            if (!line) {
                (void)printf("\n");
                break;
            }
            if (line[strspn(line, " \t")]) {
                add_history(line);
            }
        } else {
            size_t cap = 0;

            if (getline(&line, &cap, stdin) < 0) {
                free(line);
                break;
            }
        }
        ex = run_line(line, &quit);
        free(line);
    }
    if (tty && sh.history_file) {
        (void)write_history(sh.history_file);
    }
    ctl_strv_free(matches);
    matches = NULL;
    free(sh.history_file);
    free(sh.cwd);
    json_decref(c->schemas);
    c->schemas = NULL;
    memset(&sh, 0, sizeof(sh));
    return ex;
}

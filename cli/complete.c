/* SPDX-License-Identifier: MIT */
/*
 * complete.c - shell completion for configfsctl, as etcdctl's
 * `completion bash|zsh`: `configfsctl completion bash` prints a bash
 * script, `completion zsh` a zsh one (#compdef). Commands and options come
 * from configfsctl's own command table, so the scripts follow it; config
 * paths come from the server when completing, through the hidden command
 * `__complete PREFIX`, which lists the names in PREFIX's folder that start
 * with its last segment (folders with a trailing '/'), with the --server
 * and token options of the command line being completed. The build
 * installs both scripts under the FHS completion directories
 * (DATADIR/bash-completion/completions, DATADIR/zsh/site-functions).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "ctl.h"

/* The options of command @i, space-separated ("-l -R --if-match"), into a
 * new string. "-a/--attr" counts as both spellings. */
static char *cmd_options(size_t i)
{
    unsigned allowed = ctl_cmd_allowed(i);
    char *out = ctl_xstrdup("");

    for (unsigned bit = 1; bit && bit <= allowed; bit <<= 1) {
        const char *name;
        char *more;

        if (!(allowed & bit)) {
            continue;
        }
        name = ctl_option_name(bit);
        more = ctl_strdup_printf("%s%s%s", out, out[0] ? " " : "", name);
        free(out);
        out = more;
        for (char *slash = strchr(out, '/'); slash; slash = strchr(out, '/')) {
            *slash = ' ';
        }
    }
    return out;
}

/* Is --@name an option of some command (as the table spells them)? */
static bool command_option(const char *name)
{
    char *spelled = ctl_strdup_printf("--%s", name);
    bool found = false;

    for (size_t i = 0; ctl_cmd_name(i) && !found; i++) {
        char *opts = cmd_options(i);
        size_t n = strlen(spelled);

        for (const char *p = strstr(opts, spelled); p && !found;
             p = strstr(p + 1, spelled)) {
            found = (p == opts || p[-1] == ' ') && (p[n] == ' ' || !p[n]);
        }
        free(opts);
    }
    free(spelled);
    return found;
}

/* The global options ("--server --token ... --help"): the long options of
 * the option table that are no command's; and every option that takes a
 * value ("--server|--token|..."), for skipping values. */
static void long_options(char **globals, char **with_arg)
{
    const struct option *lo = ctl_long_options();

    *globals = ctl_xstrdup("");
    *with_arg = ctl_xstrdup("");
    for (; lo->name; lo++) {
        bool short_only = lo->val < 256 && lo->val != 'h'; /* -l, -p ... */

        if (!short_only && !command_option(lo->name)) {
            char *a = ctl_strdup_printf(
                "%s%s--%s", *globals, **globals ? " " : "", lo->name);

            free(*globals);
            *globals = a;
        }
        if (lo->has_arg == required_argument) {
            char *w = ctl_strdup_printf(
                "%s%s--%s", *with_arg, **with_arg ? "|" : "", lo->name);

            free(*with_arg);
            *with_arg = w;
        }
    }
    if (!(*with_arg)[0]) { /* a case pattern may not be empty */
        free(*with_arg);
        *with_arg = ctl_xstrdup("--");
    }
}

static char *command_names(void)
{
    char *out = ctl_xstrdup("");

    for (size_t i = 0; ctl_cmd_name(i); i++) {
        char *more;

        if (ctl_cmd_name(i)[0] == '_') {
            continue; /* hidden */
        }
        more = ctl_strdup_printf(
            "%s%s%s", out, out[0] ? " " : "", ctl_cmd_name(i));
        free(out);
        out = more;
    }
    return out;
}

/* One line of a shell "case $cmd in" per command that takes options,
 * setting opts to them: a bash string, or a zsh array. */
static void print_option_cases(bool zsh)
{
    for (size_t i = 0; ctl_cmd_name(i); i++) {
        char *o = cmd_options(i);

        if (o[0] && zsh) {
            (void)printf("    %s) opts=(%s) ;;\n", ctl_cmd_name(i), o);
        } else if (o[0]) {
            (void)printf("      %s) opts=\"%s\" ;;\n", ctl_cmd_name(i), o);
        }
        free(o);
    }
}

/* Commands whose argument is a local file, not a config path. */
static const char file_cmds[] = "batch|import";

static void print_bash(void)
{
    char *cmds = command_names();
    char *all, *with_arg;

    long_options(&all, &with_arg);
    (void)printf(
        "# bash completion for configfsctl (configfsctl completion bash):\n"
        "# commands and options from its table, config paths from the "
        "server.\n"
        "_configfsctl() {\n"
        "  local cur=${COMP_WORDS[COMP_CWORD]} prev=\n"
        "  [ \"$COMP_CWORD\" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
        "  local cmd= conn=() i w\n"
        "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
        "    w=${COMP_WORDS[i]}\n"
        "    case $w in\n"
        "      --server|--token|--token-file|--cacert|--cwd)\n"
        "        conn+=(\"$w\" \"${COMP_WORDS[i+1]}\"); i=$((i + 1)) ;;\n"
        "      %s) i=$((i + 1)) ;;\n"
        "      -*) ;;\n"
        "      *) [ -z \"$cmd\" ] && cmd=$w ;;\n"
        "    esac\n"
        "  done\n"
        "  case $prev in\n"
        "    --token-file|--cacert)\n"
        "      mapfile -t COMPREPLY < <(compgen -f -- \"$cur\"); return ;;\n"
        "    %s) COMPREPLY=(); return ;;\n"
        "  esac\n"
        "  if [ -z \"$cmd\" ]; then\n"
        "    mapfile -t COMPREPLY < <(compgen -W \"%s %s\" -- \"$cur\")\n"
        "    return\n"
        "  fi\n"
        "  if [[ $cur == -* ]]; then\n"
        "    local opts=\n"
        "    case $cmd in\n",
        with_arg,
        with_arg,
        cmds,
        all);
    print_option_cases(false);
    (void)printf(
        "    esac\n"
        "    mapfile -t COMPREPLY < <(compgen -W \"$opts %s\" -- \"$cur\")\n"
        "    return\n"
        "  fi\n"
        "  case $cmd in\n"
        "    %s) mapfile -t COMPREPLY < <(compgen -f -- \"$cur\"); return ;;\n"
        "    completion) mapfile -t COMPREPLY < <(compgen -W \"bash zsh\" -- "
        "\"$cur\"); return ;;\n"
        "  esac\n"
        "  local IFS=$'\\n'\n"
        "  mapfile -t COMPREPLY < <(\"${COMP_WORDS[0]}\" \"${conn[@]}\" "
        "__complete \"$cur\" 2>/dev/null)\n"
        "  # a folder ends in /: go on into it\n"
        "  compopt -o nospace 2>/dev/null\n"
        "  for i in \"${!COMPREPLY[@]}\"; do\n"
        "    [[ ${COMPREPLY[i]} == */ ]] || COMPREPLY[i]=\"${COMPREPLY[i]} \"\n"
        "  done\n"
        "}\n"
        "complete -F _configfsctl configfsctl\n",
        all,
        file_cmds);
    free(cmds);
    free(all);
    free(with_arg);
}

static void print_zsh(void)
{
    char *cmds = command_names();
    char *all, *with_arg;

    long_options(&all, &with_arg);
    (void)printf(
        "#compdef configfsctl\n"
        "# zsh completion for configfsctl (configfsctl completion zsh):\n"
        "# commands and options from its table, config paths from the "
        "server.\n"
        "local cmd= i w\n"
        "local -a conn opts paths\n"
        "for ((i = 2; i < CURRENT; i++)); do\n"
        "  w=${words[i]}\n"
        "  case $w in\n"
        "    --server|--token|--token-file|--cacert|--cwd)\n"
        "      conn+=(\"$w\" \"${words[i+1]}\"); i=$((i + 1)) ;;\n"
        "    %s) i=$((i + 1)) ;;\n"
        "    -*) ;;\n"
        "    *) [[ -z $cmd ]] && cmd=$w ;;\n"
        "  esac\n"
        "done\n"
        "case ${words[CURRENT-1]} in\n"
        "  --token-file|--cacert) _files; return ;;\n"
        "  %s) return ;;\n"
        "esac\n"
        "if [[ -z $cmd ]]; then\n"
        "  compadd -- %s %s\n"
        "  return\n"
        "fi\n"
        "if [[ ${words[CURRENT]} == -* ]]; then\n"
        "  case $cmd in\n",
        with_arg,
        with_arg,
        cmds,
        all);
    print_option_cases(true);
    (void)printf("  esac\n"
                 "  compadd -- $opts %s\n"
                 "  return\n"
                 "fi\n"
                 "case $cmd in\n"
                 "  %s) _files; return ;;\n"
                 "  completion) compadd bash zsh; return ;;\n"
                 "esac\n"
                 "paths=(${(f)\"$(${words[1]} $conn __complete "
                 "\"${words[CURRENT]}\" 2>/dev/null)\"})\n"
                 "# folders end in / and take no space: go on into them\n"
                 "compadd -S '' -- ${(M)paths:#*/}\n"
                 "compadd -- ${paths:#*/}\n",
                 all,
                 file_cmds);
    free(cmds);
    free(all);
    free(with_arg);
}

int ctl_cmd_completion(struct ctl *c,
                       const struct opts *o,
                       int argc,
                       char **argv)
{
    (void)c;
    (void)o;
    (void)argc;
    if (strcmp(argv[0], "bash") == 0) {
        print_bash();
    } else if (strcmp(argv[0], "zsh") == 0) {
        print_zsh();
    } else {
        (void)fprintf(stderr,
                      "configfsctl: completion for bash or zsh, not '%s'\n"
                      "Try 'configfsctl completion --help'.\n",
                      argv[0]);
        return CTL_EX_USAGE;
    }
    return 0;
}

/* Add @dir_prefix NAME to *@v for each name of the array @key of @node
 * that starts with @base; @slash after folders. */
static void add_names(char ***v,
                      size_t *n,
                      const json_t *node,
                      const char *key,
                      const char *dir_prefix,
                      const char *base,
                      bool slash)
{
    size_t i;
    const json_t *e;
    size_t blen = strlen(base);

    json_array_foreach(json_object_get(node, key), i, e) {
        const char *name = json_string_value(json_object_get(e, "name"));

        /* a name no configfs holds (control bytes ...) is not offered:
         * it would be written to the terminal and the command line */
        if (name && strncmp(name, base, blen) == 0 && ctl_term_safe(name)) {
            *v = ctl_xrealloc(*v, (*n + 2) * sizeof(**v));
            (*v)[(*n)++] =
                ctl_strdup_printf("%s%s%s", dir_prefix, name, slash ? "/" : "");
            (*v)[*n] = NULL;
        }
    }
}

void ctl_strv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++) {
        free(v[i]);
    }
    free(v);
}

char **
ctl_complete_names(struct ctl *c, const char *cwd, const char *word, int *ex)
{
    const char *slash = strrchr(word, '/');
    char *dir_prefix =
        slash ? ctl_strdup_printf("%.*s", (int)(slash - word + 1), word)
              : ctl_xstrdup("");
    const char *base = slash ? slash + 1 : word;
    char *abs = ctl_resolve_path(cwd, dir_prefix);
    char *url;
    struct ctl_resp r;
    json_t *node = NULL;
    char **v = NULL;
    size_t n = 0;

    if (!abs) { /* above the root: nothing to offer */
        *ex = ctl_exit_errno(EPERM);
        free(dir_prefix);
        return NULL;
    }
    url = ctl_config_url(abs);
    *ex = ctl_request(c, "GET", url, NULL, NULL, 0, NULL, &r);
    if (*ex == 0 && ctl_ok(&r)) {
        node = json_loadb(r.body, r.len, 0, NULL);
    }
    if (node) {
        v = ctl_xmalloc(sizeof(*v));
        v[0] = NULL;
        add_names(&v, &n, node, "attributes", dir_prefix, base, false);
        add_names(&v, &n, node, "children", dir_prefix, base, true);
        add_names(&v, &n, node, "links", dir_prefix, base, false);
    } else if (*ex == 0) {
        *ex = ctl_exit_code(NULL, r.status);
    }
    json_decref(node);
    ctl_resp_done(&r);
    free(url);
    free(abs);
    free(dir_prefix);
    return v;
}

int ctl_cmd_complete_path(struct ctl *c,
                          const struct opts *o,
                          int argc,
                          char **argv)
{
    int ex;
    char **v =
        ctl_complete_names(c, c->cwd ? c->cwd : "/", argc ? argv[0] : "", &ex);

    (void)o;
    for (size_t i = 0; v && v[i]; i++) {
        (void)printf("%s\n", v[i]);
    }
    ctl_strv_free(v);
    return ex;
}

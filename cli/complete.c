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
static void print_option_cases(FILE *out, bool zsh)
{
    for (size_t i = 0; ctl_cmd_name(i); i++) {
        char *o = cmd_options(i);

        if (o[0] && zsh) {
            (void)fprintf(out, "    %s) opts=(%s) ;;\n", ctl_cmd_name(i), o);
        } else if (o[0]) {
            (void)fprintf(
                out, "      %s) opts=\"%s\" ;;\n", ctl_cmd_name(i), o);
        }
        free(o);
    }
}

/* Commands whose argument is a local file, not a config path. */
static const char file_cmds[] = "batch|import";

/* The bash script; @NAME@ stands for what the command table gives. */
static const char bash_script[] =
    "# bash completion for configfsctl (configfsctl completion bash):\n"
    "# commands and options from its table, config paths from the server.\n"
    "# Every name is inserted quoted (printf %q): a name comes from the "
    "server,\n"
    "# where any writer chose it, and must never be read as code.\n"
    "\n"
    "# _configfsctl_words: the words of the line up to the cursor, split as "
    "the\n"
    "# shell splits them (blanks outside quotes; not at COMP_WORDBREAKS, "
    "which\n"
    "# would cut a URL at its ':'), as typed, in WORDS; the last one is the "
    "word\n"
    "# being completed, of which readline replaces what follows its last\n"
    "# unquoted COMP_WORDBREAKS character: the first BREAK characters stay;\n"
    "# OPEN is the quote still open at the cursor when the word begins with "
    "it\n"
    "_configfsctl_words() {\n"
    "  local s=${COMP_LINE:0:COMP_POINT} w= q= c i in=\n"
    "  local bw=${COMP_WORDBREAKS//[[:space:]\\\"\\']}\n"
    "  WORDS=() BREAK=0 OPEN=\n"
    "  for ((i = 0; i < ${#s}; i++)); do\n"
    "    c=${s:i:1}\n"
    "    if [[ -n $q ]]; then\n"
    "      w+=$c\n"
    "      if [[ $c == \"$q\" ]]; then\n"
    "        q=\n"
    "      elif [[ $c == '\\' && $q == '\"' ]]; then\n"
    "        i=$((i + 1)); w+=${s:i:1}\n"
    "      fi\n"
    "    elif [[ $c == [[:blank:]] ]]; then\n"
    "      [[ -n $in ]] && WORDS+=(\"$w\")\n"
    "      w= in= BREAK=0 OPEN=\n"
    "    elif [[ $c == '\\' ]]; then\n"
    "      i=$((i + 1)); w+=$c${s:i:1}; in=1\n"
    "    else\n"
    "      [[ $c == [\\\"\\'] ]] && q=$c\n"
    "      w+=$c; in=1\n"
    "      [[ -n $bw && $c == [$bw] ]] && BREAK=${#w}\n"
    "    fi\n"
    "  done\n"
    "  [[ -n $q && ${w:0:1} == \"$q\" ]] && OPEN=$q\n"
    "  WORDS+=(\"$w\")\n"
    "}\n"
    "\n"
    "# _configfsctl_unquote WORD: WORD as the shell will read it, quotes and\n"
    "# backslashes taken off, in REPLY (nothing is expanded or run)\n"
    "_configfsctl_unquote() {\n"
    "  local s=$1 out= q= c i\n"
    "  for ((i = 0; i < ${#s}; i++)); do\n"
    "    c=${s:i:1}\n"
    "    if [[ $q == \"'\" ]]; then\n"
    "      if [[ $c == \"'\" ]]; then q=; else out+=$c; fi\n"
    "    elif [[ $q == '\"' ]]; then\n"
    "      if [[ $c == '\"' ]]; then\n"
    "        q=\n"
    "      elif [[ $c == '\\' && ${s:i+1:1} == [\\\"\\\\\\$\\`] ]]; then\n"
    "        i=$((i + 1)); out+=${s:i:1}\n"
    "      else\n"
    "        out+=$c\n"
    "      fi\n"
    "    elif [[ $c == \"'\" || $c == '\"' ]]; then\n"
    "      q=$c\n"
    "    elif [[ $c == '\\' ]]; then\n"
    "      i=$((i + 1)); out+=${s:i:1}\n"
    "    else\n"
    "      out+=$c\n"
    "    fi\n"
    "  done\n"
    "  REPLY=$out\n"
    "}\n"
    "\n"
    "_configfsctl() {\n"
    "  local WORDS BREAK OPEN REPLY\n"
    "  _configfsctl_words\n"
    "  local n=${#WORDS[@]}\n"
    "  local cur=${WORDS[n-1]} prev=\n"
    "  [ \"$n\" -gt 1 ] && prev=${WORDS[n-2]}\n"
    "  local cmd= conn=() i w\n"
    "  for ((i = 1; i < n - 1; i++)); do\n"
    "    w=${WORDS[i]}\n"
    "    case $w in\n"
    "      --server|--token|--token-file|--cacert|--cwd)\n"
    "        _configfsctl_unquote \"${WORDS[i+1]}\"\n"
    "        conn+=(\"$w\" \"$REPLY\"); i=$((i + 1)) ;;\n"
    "      @WITH_ARG@) i=$((i + 1)) ;;\n"
    "      -*) ;;\n"
    "      *) [ -z \"$cmd\" ] && cmd=$w ;;\n"
    "    esac\n"
    "  done\n"
    "  case $prev in\n"
    "    --token-file|--cacert)\n"
    "      compopt -o filenames 2>/dev/null\n"
    "      mapfile -t COMPREPLY < <(compgen -f -- \"$cur\"); return ;;\n"
    "    @WITH_ARG@) COMPREPLY=(); return ;;\n"
    "  esac\n"
    "  if [ -z \"$cmd\" ]; then\n"
    "    mapfile -t COMPREPLY < <(compgen -W \"@CMDS@ @ALL@\" -- \"$cur\")\n"
    "    return\n"
    "  fi\n"
    "  if [[ $cur == -* ]]; then\n"
    "    local opts=\n"
    "    case $cmd in\n"
    "@OPTION_CASES@    esac\n"
    "    mapfile -t COMPREPLY < <(compgen -W \"$opts @ALL@\" -- \"$cur\")\n"
    "    return\n"
    "  fi\n"
    "  case $cmd in\n"
    "    @FILE_CMDS@)\n"
    "      compopt -o filenames 2>/dev/null\n"
    "      mapfile -t COMPREPLY < <(compgen -f -- \"$cur\"); return ;;\n"
    "    completion) mapfile -t COMPREPLY < <(compgen -W \"bash zsh\" -- "
    "\"$cur\"); return ;;\n"
    "  esac\n"
    "  local IFS=$'\\n' c q names=() ctl\n"
    "  _configfsctl_unquote \"${WORDS[0]}\"\n"
    "  ctl=$REPLY\n"
    "  _configfsctl_unquote \"$cur\"\n"
    "  mapfile -t names < <(\"$ctl\" \"${conn[@]}\" __complete \"$REPLY\" "
    "2>/dev/null)\n"
    "  # each name quoted for the shell, less what readline keeps of the word\n"
    "  # (up to a ':' ...); a folder ends in / and goes on into it. Inside a\n"
    "  # quote the word began with, which readline keeps and closes, each "
    "name\n"
    "  # is quoted for that quote instead.\n"
    "  compopt -o nospace 2>/dev/null\n"
    "  COMPREPLY=()\n"
    "  for c in \"${names[@]}\"; do\n"
    "    if [[ $OPEN == \"'\" ]]; then\n"
    "      q=${c//\"'\"/\"'\\\\''\"}\n"
    "    elif [[ -n $OPEN ]]; then\n"
    "      q=${c//\\\\/\\\\\\\\} q=${q//\\\"/\\\\\\\"} q=${q//\\$/\\\\\\$} "
    "q=${q//\\`/\\\\\\`}\n"
    "    else\n"
    "      printf -v q '%q' \"$c\"\n"
    "      [[ $c == */ ]] || q+=' '\n"
    "      q=${q:BREAK}\n"
    "    fi\n"
    "    COMPREPLY+=(\"$q\")\n"
    "  done\n"
    "}\n"
    "complete -F _configfsctl configfsctl\n";

/* @tmpl with each "@KEY@" of @keys replaced by its value in @vals, to
 * stdout. */
static void
put_template(const char *tmpl, const char *const *keys, const char *const *vals)
{
    for (const char *p = tmpl; *p;) {
        const char *at = strchr(p, '@');
        size_t i = 0;

        if (!at) {
            (void)fputs(p, stdout);
            break;
        }
        (void)fwrite(p, 1, (size_t)(at - p), stdout);
        for (; keys[i]; i++) {
            size_t n = strlen(keys[i]);

            if (strncmp(at + 1, keys[i], n) == 0 && at[1 + n] == '@') {
                break;
            }
        }
        if (keys[i]) {
            (void)fputs(vals[i], stdout);
            p = at + strlen(keys[i]) + 2;
        } else {
            (void)putchar('@');
            p = at + 1;
        }
    }
}

/* The "case $cmd in" lines of print_option_cases(), as a string. */
static char *option_cases(bool zsh)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);

    if (!f) {
        return ctl_xstrdup("");
    }
    print_option_cases(f, zsh);
    if (fclose(f) != 0 || !buf) {
        free(buf);
        return ctl_xstrdup("");
    }
    return buf;
}

static void print_bash(void)
{
    static const char *const keys[] = {
        "WITH_ARG", "CMDS", "ALL", "OPTION_CASES", "FILE_CMDS", NULL};
    char *cmds = command_names();
    char *cases = option_cases(false);
    char *all, *with_arg;

    long_options(&all, &with_arg);
    {
        const char *const vals[] = {with_arg, cmds, all, cases, file_cmds};

        put_template(bash_script, keys, vals);
    }
    free(cases);
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
        "      conn+=(\"$w\" \"${(Q)words[i+1]}\"); i=$((i + 1)) ;;\n"
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
    print_option_cases(stdout, true);
    (void)printf("  esac\n"
                 "  compadd -- $opts %s\n"
                 "  return\n"
                 "fi\n"
                 "case $cmd in\n"
                 "  %s) _files; return ;;\n"
                 "  completion) compadd bash zsh; return ;;\n"
                 "esac\n"
                 "# the word as typed (PREFIX: without a quote it begins "
                 "with), quotes\n"
                 "# taken off; compadd quotes each name\n"
                 "# it inserts: a name from the server is never code\n"
                 "paths=(${(f)\"$(${(Q)words[1]} $conn __complete "
                 "\"${(Q)PREFIX}\" 2>/dev/null)\"})\n"
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
 * that starts with @base; @slash after folders. A NAME that would begin
 * the word with '-' gets @dash_prefix instead ("./", or "/" from the
 * root): the word must name the child, not read as an option. */
static void add_names(char ***v,
                      size_t *n,
                      const json_t *node,
                      const char *key,
                      const char *dir_prefix,
                      const char *dash_prefix,
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
            (*v)[(*n)++] = ctl_strdup_printf(
                "%s%s%s",
                !dir_prefix[0] && name[0] == '-' ? dash_prefix : dir_prefix,
                name,
                slash ? "/" : "");
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
        node = ctl_json_parse(r.body, r.len, NULL);
    }
    if (node) {
        v = ctl_xmalloc(sizeof(*v));
        v[0] = NULL;
        /* from the root, "/-x" is "-x"; elsewhere "./" is resolved from
         * the working directory (paths.c) */
        const char *dash = strcmp(cwd, "/") == 0 ? "/" : "./";

        add_names(&v, &n, node, "attributes", dir_prefix, dash, base, false);
        add_names(&v, &n, node, "children", dir_prefix, dash, base, true);
        add_names(&v, &n, node, "links", dir_prefix, dash, base, false);
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

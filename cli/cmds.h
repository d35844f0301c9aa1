/* SPDX-License-Identifier: MIT */
/*
 * cmds.h - the commands of configfsctl that live outside configfsctl.c
 * (endpoints.c: cluster, health over every server; complete.c: completion
 * and the path completer), and what they read of configfsctl.c's command
 * table and options. Each command has the signature of the table's run().
 */
#ifndef CFS_CTL_CMDS_H
#define CFS_CTL_CMDS_H

#include <getopt.h>
#include <stddef.h>

#include "ctl.h"

struct opts;

/* configfsctl.c: the command table, for complete.c. The name of command
 * @i (NULL past the end), the options it takes as a mask, and how the
 * option of one bit of that mask is spelled ("-l", "--if-match"). */
const char *ctl_cmd_name(size_t i);
unsigned ctl_cmd_allowed(size_t i);
const char *ctl_option_name(unsigned bit);
const struct option *ctl_long_options(void);

/* configfsctl.c: run one command line (@argv[0] a program name, then the
 * command, its options and arguments) on @c, as main() would; only --json
 * of the global options applies. @return its exit status. */
int ctl_run_line(struct ctl *c, int argc, char **argv);

/* configfsctl.c: health against the one server in use. */
int ctl_cmd_health_one(struct ctl *c,
                       const struct opts *o,
                       int argc,
                       char **argv);

/* endpoints.c */
int ctl_cmd_cluster(struct ctl *c, const struct opts *o, int argc, char **argv);
int ctl_cmd_health(struct ctl *c, const struct opts *o, int argc, char **argv);

/* complete.c */
int ctl_cmd_completion(struct ctl *c,
                       const struct opts *o,
                       int argc,
                       char **argv);
int ctl_cmd_complete_path(struct ctl *c,
                          const struct opts *o,
                          int argc,
                          char **argv);
/* The completions of @word, a path typed relative to the absolute @cwd
 * (or absolute): @word's folder part followed by each name there that
 * starts with its last part, folders with a trailing '/'. NULL-terminated
 * new array of new strings; NULL when the server did not list the folder
 * (*ex: the exit status). */
char **
ctl_complete_names(struct ctl *c, const char *cwd, const char *word, int *ex);
void ctl_strv_free(char **v);

/* paths.c: @rel (absolute, or relative with . and ..) from the absolute
 * @dir, as an absolute path; NULL when its .. climbs above the root.
 * New string. */
char *ctl_resolve_path(const char *dir, const char *rel);
/* paths.c: say that @rel (an argument of the command @what, or NULL)
 * climbs above the root from @dir; @return the exit code (EPERM's). */
int ctl_above_root(const char *what, const char *dir, const char *rel);
/* paths.c: the config path arguments of the command line *@pv (v[0] the
 * command, NULL-terminated, @n words, each a malloc'd string) resolved
 * from the working directory @cwd in place, and @cwd added where the
 * command's PATH may be left out. @parsed: options are already taken out
 * (every word is an argument), else option words and their values are
 * skipped as getopt would. @return the number of words now, or minus the
 * exit code of a path above the root (printed). */
int ctl_resolve_args(const char *cwd, char ***pv, int n, bool parsed);

/* summary.c: the summaries of the children of the folder @path, an
 * object {name: text} of those whose type declares one; NULL when none
 * does, when summaries are off (c->schemas NULL) or could not be read.
 * New reference. */
json_t *ctl_summaries(struct ctl *c, const char *path);
/* @tmpl ("{attr}", "{@links}") filled from @node (its attributes with
 * values, its links): each value's first line, "-" for an unset one, the
 * link targets joined by ", ". New string. */
char *ctl_summary_fill(const char *tmpl, const json_t *node);

/* shell.c */
int ctl_cmd_shell(struct ctl *c, const struct opts *o, int argc, char **argv);

#endif /* CFS_CTL_CMDS_H */

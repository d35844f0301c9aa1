/* SPDX-License-Identifier: MIT */
/*
 * log.h - configfsd's log: one logfmt line per event (ts=, level=, event=,
 * then key=value pairs), or one JSON object with the same keys, filtered by
 * level, written with one write(2) so that lines from worker threads never
 * interleave.
 *
 * Logs go to stderr, or to a file given with cfs_log_open_file(); a file is
 * reopened in place by cfs_log_reopen() (SIGHUP, for log rotation).
 */
#ifndef CFS_LOG_H
#define CFS_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cfs_log_level {
    CFS_LOG_ERROR = 0,
    CFS_LOG_WARNING,
    CFS_LOG_INFO,
    CFS_LOG_DEBUG,
};

/** "error", "warning", "info" or "debug" into *ret.
 *  @return 0 or -EINVAL (ret untouched). */
int cfs_log_level_parse(const char *name, enum cfs_log_level *ret);

enum cfs_log_format {
    CFS_LOG_FORMAT_LOGFMT = 0, /* ts=... level=... event=... msg="..." */
    CFS_LOG_FORMAT_JSON,       /* {"ts":"...","level":"...",...} */
};

/** "logfmt" or "json" into *ret. @return 0 or -EINVAL (ret untouched). */
int cfs_log_format_parse(const char *name, enum cfs_log_format *ret);

/** The format of the lines written from now on. Default logfmt. */
void cfs_log_set_format(enum cfs_log_format format);

/** Lines above @level are dropped. Default CFS_LOG_INFO. Thread-safe. */
void cfs_log_set_level(enum cfs_log_level level);
bool cfs_log_enabled(enum cfs_log_level level);

/** Send the log to @path (appended to, created 0640) instead of stderr.
 *  @return 0 or a negative errno; the log is unchanged on failure. */
int cfs_log_open_file(const char *path);

/** Reopen the file given to cfs_log_open_file() under its name, so that a
 *  rotated file is let go; lines being written meanwhile go to either file.
 *  A no-op returning 0 when the log is stderr.
 *  @return 0 or a negative errno (the old file stays in use). */
int cfs_log_reopen(void);

/** Back to stderr; closes the file. Call when no other thread logs. */
void cfs_log_close(void);

/** One line: ts=... level=... event=@event msg="<formatted>". */
void cfs_log(enum cfs_log_level level, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** A line at level "notice", written whatever the level: where the server
 *  listens and that it stops, which scripts and operators wait for. */
void cfs_log_notice(const char *event, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** The access-log line of one request, at info (error for a 5xx status).
 *  @path is logged as sent, with bytes outside printable ASCII escaped. */
void cfs_log_access(const char *method,
                    const char *path,
                    int status,
                    size_t bytes,
                    uint64_t micros,
                    const char *principal);

#endif /* CFS_LOG_H */

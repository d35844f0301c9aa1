/* SPDX-License-Identifier: MIT */
/*
 * http.h - the HTTP front end of configfsd: a libmicrohttpd daemon serving
 * the REST API of DESIGN section 4 over the core's operation layer.
 */
#ifndef CFS_HTTP_H
#define CFS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cfs_http_server;
struct cfs_schema_set;

/* Zero members take the defaults of <configfs/limits.h>. */
struct cfs_http_options {
    const char *listen;           /* "HOST:PORT"; port 0 picks one */
    unsigned int threads;         /* worker threads; 0: one per core */
    size_t body_limit;            /* bytes; 0: CFS_BODY_MAX */
    size_t header_limit;          /* bytes per connection; 0: CFS_HEADER_MAX */
    unsigned int max_connections; /* 0: CFS_CONN_MAX */
    unsigned int timeout_s;       /* idle seconds; 0: CFS_CONN_TIMEOUT */
    const char *static_dir;       /* web/static, or NULL */
    bool quiet;                   /* no access log */
    struct cfs_schema_set *schemas; /* for GET /api/v1/schema/; borrowed */
};

/** Start serving. Ownership: *ret_srv is new; stop with
 *  cfs_http_server_free(). @return 0 or negative errno. */
int cfs_http_server_start(const struct cfs_http_options *opts,
                          struct cfs_http_server **ret_srv);

/** The port it listens on (useful with port 0). */
uint16_t cfs_http_server_port(const struct cfs_http_server *srv);

/** Stop accepting, finish requests in flight, free. NULL-safe. */
void cfs_http_server_free(struct cfs_http_server *srv);

#endif /* CFS_HTTP_H */

// SPDX-License-Identifier: MIT
/*
 * openapi.c - GET /api/v1/openapi.yaml: the HTTP contract, api/openapi.yaml,
 * answered from the copy built into the binary (api/meson.build embeds it),
 * so the served file is always the one this server was built with and no
 * request reads the filesystem.
 */
#include <stddef.h>

#include "openapi.h"
#include "reply.h"

/* Generated from api/openapi.yaml by scripts/embed-file.py. */
extern const unsigned char cfs_openapi_yaml[];
extern const size_t cfs_openapi_yaml_len;

/* The router lets only GET and HEAD through. */
void cfs_http_handle_openapi(struct cfs_http_req *req)
{
    cfs_http_reply_text(req,
                        MHD_HTTP_OK,
                        "application/yaml",
                        (const char *)cfs_openapi_yaml,
                        cfs_openapi_yaml_len);
}

// SPDX-License-Identifier: MIT
/*
 * body.c - the request body: its JSON (an object, members checked), the
 * values it gives (strings, numbers, booleans, base64 bytes) and the config
 * paths it names. Every refusal is a 400 or 415 answered here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <configfs/base64.h>
#include "body.h"
#include "reply.h"
#include "request.h"

bool cfs_http_content_is_json(struct cfs_http_req *req)
{
    const char *ct = cfs_http_header_in(req, MHD_HTTP_HEADER_CONTENT_TYPE);
    size_t n = strlen("application/json");

    return ct && strncasecmp(ct, "application/json", n) == 0 &&
           (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

/* Whether every string of @j that holds a NUL byte is a value: a member
 * "value" (PUT, batch, import) or a member of "attributes" (mkdir). Names,
 * paths and targets are C strings everywhere behind the API. */
static bool nul_only_in_values(json_t *j, bool is_value, bool is_attrs)
{
    const char *key;
    json_t *v;
    size_t i;

    if (json_is_string(j)) {
        return is_value ||
               strlen(json_string_value(j)) == json_string_length(j);
    }
    json_object_foreach(j, key, v) {
        if (!nul_only_in_values(v,
                                is_attrs || strcmp(key, "value") == 0,
                                strcmp(key, "attributes") == 0)) {
            return false;
        }
    }
    json_array_foreach(j, i, v) {
        if (!nul_only_in_values(v, false, false)) {
            return false;
        }
    }
    return true;
}

/* Parse a JSON object body; on failure answer 400/415 and return NULL. */
json_t *cfs_http_json_body(struct cfs_http_req *req)
{
    json_error_t jerr;
    json_t *body;

    if (!cfs_http_content_is_json(req)) {
        cfs_http_problem(req,
                         MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
                         -EINVAL,
                         NULL,
                         "the body must be application/json");
        return NULL;
    }
    body = json_loadb(req->body ? req->body : "",
                      req->body_len,
                      JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
                      &jerr);
    if (!body) {
        json_t *extra = json_object();

        json_object_set_new(extra, "line", json_integer(jerr.line));
        json_object_set_new(extra, "column", json_integer(jerr.column));
        cfs_http_problem_json(req,
                              MHD_HTTP_BAD_REQUEST,
                              -EINVAL,
                              "Malformed JSON",
                              jerr.text,
                              extra);
        return NULL;
    }
    if (!json_is_object(body)) {
        json_decref(body);
        cfs_http_bad_request(req, "the body must be a JSON object");
        return NULL;
    }
    if (!nul_only_in_values(body, false, false)) {
        json_decref(body);
        cfs_http_bad_request(req, "\\u0000 is allowed only in a value");
        return NULL;
    }
    return body;
}

/* Refuse a body with a member not in @allowed (NULL-terminated): 400.
 * @return true when every member is known. */
bool cfs_http_known_members(struct cfs_http_req *req,
                            json_t *body,
                            const char *const *allowed)
{
    const char *key;
    json_t *v;

    json_object_foreach(body, key, v) {
        size_t i = 0;

        while (allowed[i] && strcmp(key, allowed[i]) != 0) {
            i++;
        }
        if (!allowed[i]) {
            cfs_http_bad_request(req, "unknown member \"%s\"", key);
            return false;
        }
    }
    return true;
}

/*
 * A value given in JSON: a string (its bytes), an integer, a real or a
 * boolean (their text); {"value":…, "encoding":"base64"} for bytes.
 * @return a new buffer, or NULL with *ret_err set to a reason.
 */
char *cfs_http_json_value_bytes(json_t *v,
                                json_t *encoding,
                                size_t *ret_len,
                                const char **ret_err)
{
    char *out;

    if (encoding && !json_is_null(encoding)) {
        if (!json_is_string(encoding) ||
            strcmp(json_string_value(encoding), "base64") != 0 ||
            !json_is_string(v)) {
            *ret_err = "\"encoding\" must be \"base64\" with a string value";
            return NULL;
        }
        int r = cfs_base64_decode(
            json_string_value(v), json_string_length(v), &out, ret_len);

        if (r == -EINVAL) {
            *ret_err = "the value is not strict base64 (RFC 4648: the "
                       "standard alphabet, padded, no whitespace)";
        }
        return r < 0 ? NULL : out; /* no memory: *ret_err not set */
    }
    if (json_is_string(v)) {
        *ret_len = json_string_length(v);
        out = malloc(*ret_len + 1);
        if (out) {
            memcpy(out, json_string_value(v), *ret_len + 1);
        }
        return out;
    }
    if (json_is_integer(v) || json_is_real(v) || json_is_boolean(v)) {
        char buf[64];

        if (json_is_integer(v)) {
            (void)snprintf(buf,
                           sizeof(buf),
                           "%" JSON_INTEGER_FORMAT,
                           json_integer_value(v));
        } else if (json_is_real(v)) {
            (void)snprintf(buf, sizeof(buf), "%.17g", json_real_value(v));
        } else {
            (void)snprintf(
                buf, sizeof(buf), "%s", json_is_true(v) ? "true" : "false");
        }
        *ret_len = strlen(buf);
        return strdup(buf);
    }
    *ret_err = "a value must be a string, a number or a boolean";
    return NULL;
}

int cfs_http_body_path(struct cfs_http_req *req,
                       json_t *v,
                       const char *what,
                       char **ret)
{
    const char *s;
    int r;
    char quoted[64];

    (void)snprintf(quoted, sizeof(quoted), "\"%s\"", what);
    if (!cfs_http_absolute(
            req, json_string_value(v), json_string_length(v), quoted)) {
        return -EINVAL;
    }
    s = json_string_value(v);
    /* Same rules as a URL path, without percent-decoding. */
    for (const char *p = s; *p;) {
        size_t n = strcspn(p, "/");

        if (n > 0) {
            r = cfs_name_check(p, n);
            if (r < 0) {
                cfs_http_problem(req,
                                 MHD_HTTP_BAD_REQUEST,
                                 r,
                                 "Invalid path",
                                 "\"%s\" has an invalid name",
                                 what);
                return r;
            }
        }
        p += n;
        while (*p == '/') {
            p++;
        }
    }
    *ret = strdup(s);
    return *ret ? 0 : -ENOMEM;
}

// SPDX-License-Identifier: MIT
/*
 * problems.c - the store's list of replay problems: what could not be made
 * again (at open, at a subsystem's registration, or from another node's
 * batch), kept until a later change settles it, and read by
 * cfs_store_problems() (/readyz, /metrics).
 */
#include <errno.h>
#include <string.h>

#include "store-internal.h"

int store_plist_add(struct store_problem_list *l,
                    const char *path,
                    enum cfs_store_step_op op,
                    int error)
{
    struct cfs_store_problem *p;

    if (cfs_grow(&l->v, &l->cap, l->n, sizeof(*l->v), 8)) {
        return -ENOMEM;
    }
    p = &l->v[l->n];
    *p = (struct cfs_store_problem){.op = op, .error = error};
    p->path = cfs_strdup(path);
    if (!p->path) {
        return -ENOMEM;
    }
    l->n++;
    return 0;
}

void store_plist_free(struct store_problem_list *l)
{
    cfs_store_problems_free(l->v, l->n);
    *l = (struct store_problem_list){0};
}

/* Remove the problems at or under @path. @pre p_lock */
void store_plist_remove_under(struct store_problem_list *l, const char *path)
{
    size_t plen = strlen(path), j = 0;

    for (size_t i = 0; i < l->n; i++) {
        if (store_path_under(l->v[i].path, path, plen)) {
            cfs_free(l->v[i].path);
        } else {
            l->v[j++] = l->v[i];
        }
    }
    l->n = j;
}

void store_problem_add(struct cfs_store *s,
                       const char *path,
                       enum cfs_store_step_op op,
                       int error)
{
    pthread_mutex_lock(&s->p_lock);
    store_plist_add(&s->problems, path, op, error);
    pthread_mutex_unlock(&s->p_lock);
}

void store_problems_clear(struct cfs_store *s)
{
    pthread_mutex_lock(&s->p_lock);
    store_plist_free(&s->problems);
    pthread_mutex_unlock(&s->p_lock);
}

void store_problems_forget(struct cfs_store *s,
                           const struct cfs_store_changeset *sets,
                           size_t n)
{
    pthread_mutex_lock(&s->p_lock);
    for (size_t i = 0; i < n && s->problems.n > 0; i++) {
        for (size_t j = 0; j < sets[i].n; j++) {
            const struct cfs_change *c = &sets[i].changes[j];

            if (c->op == CFS_OP_MKDIR || c->op == CFS_OP_SYMLINK) {
                store_plist_remove_under(&s->problems, c->path);
            }
        }
    }
    pthread_mutex_unlock(&s->p_lock);
}

int cfs_store_problems(struct cfs_store *s,
                       struct cfs_store_problem **ret_problems,
                       size_t *ret_n)
{
    struct cfs_store_problem *v = NULL;
    size_t n;
    int r = 0;

    if (!s || !ret_problems || !ret_n) {
        return -EINVAL;
    }
    pthread_mutex_lock(&s->p_lock);
    n = s->problems.n;
    if (n > 0) {
        v = cfs_zalloc(n * sizeof(*v));
        if (!v) {
            r = -ENOMEM;
        }
        for (size_t i = 0; i < n && r == 0; i++) {
            v[i] = s->problems.v[i];
            v[i].path = cfs_strdup(s->problems.v[i].path);
            if (!v[i].path) {
                r = -ENOMEM;
            }
        }
    }
    pthread_mutex_unlock(&s->p_lock);
    if (r < 0) {
        cfs_store_problems_free(v, n);
        return r;
    }
    *ret_problems = v;
    *ret_n = n;
    return 0;
}

void cfs_store_problems_free(struct cfs_store_problem *problems, size_t n)
{
    if (!problems) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        cfs_free(problems[i].path);
    }
    cfs_free(problems);
}

const char *cfs_store_step_name(enum cfs_store_step_op op)
{
    switch (op) {
    case CFS_STORE_STEP_MKDIR:
        return "mkdir";
    case CFS_STORE_STEP_DIR:
        return "dir";
    case CFS_STORE_STEP_STORE:
        return "store";
    case CFS_STORE_STEP_SYMLINK:
        return "symlink";
    case CFS_STORE_STEP_COMMIT:
        return "commit";
    case CFS_STORE_STEP_SUBSYSTEM:
        return "subsystem";
    case CFS_STORE_STEP_UNDO:
        return "undo";
    case CFS_STORE_STEP_LOG:
        return "log";
    }
    return "?";
}

// SPDX-License-Identifier: MIT
/*
 * subsys.c - a loaded schema as a configfs subsystem.
 *
 * Each type becomes a config_item_type whose operations are the generic
 * callbacks below; each object (the subsystem's group, a default group,
 * what mkdir made) is a struct schema_obj holding its attribute values. The
 * callbacks are an ordinary kernel-style client of configfs.h: make_item
 * and make_group build objects of the "creates" (or committable) type with
 * their default groups, store validates by kind, allow_link checks the
 * target's type, commit_item checks the required attributes.
 *
 * Locking (docs/internals/locking.md): make_*, drop_item, commit_item and
 * uncommit_item run under su_mutex, which guards nchildren; store,
 * allow_link and commit run under core's mutation lock, which orders the
 * "live" flag against stores; show runs under no core lock, so values are
 * guarded by each object's vlock.
 */
#include "internal.h"

#include <inttypes.h>

static void obj_release(struct config_item *item);

static bool is_schema_type(const struct config_item_type *t)
{
    return t && t->ct_item_ops && t->ct_item_ops->release == obj_release;
}

static struct schema_type *type_of(const struct config_item_type *t)
{
    return container_of(t, struct schema_type, ct);
}

static struct schema_obj *obj_of(struct config_item *item)
{
    return container_of(item, struct schema_obj, su.su_group.cg_item);
}

static struct config_item *obj_item(struct schema_obj *obj)
{
    return &obj->su.su_group.cg_item;
}

static struct schema_attr *attr_of(struct configfs_attribute *attr)
{
    return container_of(attr, struct schema_attr, ca);
}

/* The schema object a directory belongs to: itself, or for the pending/
 * and live/ groups core adds to a committable group, that group.
 * @pre the mutation lock or su_mutex (ci_parent is stable). */
static struct schema_obj *owner_of(struct config_item *item)
{
    if (item && !is_schema_type(item->ci_type)) {
        item = item->ci_parent;
    }
    return item && is_schema_type(item->ci_type) ? obj_of(item) : NULL;
}

/* ---- the schema's life ------------------------------------------------- */

static void attr_destroy(struct schema_attr *a)
{
    cfs_free(a->name);
    cfs_free(a->def);
    cfs_free(a->pattern);
    cfs_free(a->format);
    cfs_free(a->fmt_pre);
    cfs_free(a->fmt_post);
    if (a->has_re) {
        regfree(&a->re);
    }
    for (size_t i = 0; i < a->n_values; i++) {
        cfs_free(a->values[i]);
    }
    cfs_free(a->values);
}

void schema_destroy(struct cfs_schema *s)
{
    for (size_t i = 0; i < s->n_types; i++) {
        struct schema_type *t = &s->types[i];

        for (size_t k = 0; k < t->n_attrs; k++) {
            attr_destroy(&t->attrs[k]);
        }
        for (size_t k = 0; k < t->n_dgroups; k++) {
            cfs_free(t->dgroups[k].name);
        }
        cfs_free(t->attrs);
        cfs_free(t->ct_attrs);
        cfs_free(t->dgroups);
        cfs_free(t->allow);
        cfs_free(t->required);
        cfs_free(t->name);
        cfs_free(t->name_pattern);
        if (t->has_name_re) {
            regfree(&t->name_re);
        }
        for (size_t k = 0; k < t->n_name_examples; k++) {
            cfs_free(t->name_examples[k]);
        }
        cfs_free(t->name_examples);
        cfs_free(t->summary);
    }
    cfs_free(s->types);
    cfs_free(s->file);
    cfs_free(s->subsystem);
    cfs_free(s->description);
    cfs_free(s);
}

void schema_put(struct cfs_schema *s)
{
    if (s && atomic_fetch_sub(&s->refs, 1) == 1) {
        schema_destroy(s);
    }
}

void cfs_schema_free(struct cfs_schema *s)
{
    if (!s) {
        return;
    }
    cfs_schema_unregister(s);
    schema_put(s);
}

const char *cfs_schema_name(const struct cfs_schema *s)
{
    return s->subsystem;
}

const char *cfs_schema_file(const struct cfs_schema *s)
{
    return s->file;
}

/* ---- objects ----------------------------------------------------------- */

static void obj_release(struct config_item *item)
{
    struct schema_obj *obj = obj_of(item);
    struct cfs_schema *s = obj->type->schema;

    /* Default groups are the client's to drop (M14). */
    configfs_remove_default_groups(&obj->su.su_group);
    if (obj->values) {
        for (size_t i = 0; i < obj->type->n_attrs; i++) {
            cfs_free(obj->values[i]);
        }
    }
    cfs_free(obj->values);
    cfs_free(obj->lens);
    pthread_mutex_destroy(&obj->vlock);
    pthread_mutex_destroy(&obj->su.su_mutex.lock);
    cfs_free(obj);
    schema_put(s);
}

/*
 * A new object of @t named @name, with its attribute defaults and,
 * recursively, its default groups (M13). The caller gets the one
 * reference config_group_init_type_name() gives. NULL when out of memory.
 */
static struct schema_obj *obj_new(struct schema_type *t, const char *name)
{
    struct schema_obj *obj = cfs_zalloc(sizeof(*obj));

    if (!obj) {
        return NULL;
    }
    obj->type = t;
    pthread_mutex_init(&obj->vlock, NULL);
    pthread_mutex_init(&obj->su.su_mutex.lock, NULL);
    atomic_fetch_add(&t->schema->refs, 1);
    config_group_init_type_name(&obj->su.su_group, name, &t->ct);
    /* From here on a put releases whatever was built. */
    if (!obj_item(obj)->ci_name) {
        goto fail;
    }
    obj->values = cfs_zalloc(t->n_attrs * sizeof(*obj->values));
    obj->lens = cfs_zalloc(t->n_attrs * sizeof(*obj->lens));
    if (!obj->values || !obj->lens) {
        goto fail;
    }
    for (size_t i = 0; i < t->n_attrs; i++) {
        const char *def = t->attrs[i].def ? t->attrs[i].def : "";

        obj->values[i] = cfs_strdup(def);
        if (!obj->values[i]) {
            goto fail;
        }
        obj->lens[i] = strlen(def);
    }
    for (size_t i = 0; i < t->n_dgroups; i++) {
        struct schema_obj *dg = obj_new(t->dgroups[i].type, t->dgroups[i].name);

        if (!dg) {
            goto fail;
        }
        configfs_add_default_group(&dg->su.su_group, &obj->su.su_group);
    }
    return obj;

fail:
    config_item_put(obj_item(obj));
    return NULL;
}

/* ---- group operations -------------------------------------------------- */

/* @pre su_mutex (core holds it around make_*). */
static struct schema_obj *make_obj(struct config_group *group, const char *name)
{
    struct schema_obj *owner = owner_of(&group->cg_item);
    struct schema_type *t;
    struct schema_type *made;
    struct schema_obj *obj;

    cfs_schema_clear_detail();
    if (!owner) {
        return ERR_PTR(-EPERM); /* not ours: cannot happen */
    }
    t = owner->type;
    if (t->has_max_children && owner->nchildren >= t->max_children) {
        schema_set_detail("at most %" PRIu64 " %s in %s",
                          t->max_children,
                          t->max_children == 1 ? "child" : "children",
                          config_item_name(obj_item(owner)));
        return ERR_PTR(-ENOSPC);
    }
    made = t->creates ? t->creates : t->commit_type;
    if (made->has_name_re && regexec(&made->name_re, name, 0, NULL, 0) != 0) {
        schema_set_detail("the name of a %s must match %s%s%s",
                          made->name,
                          made->name_pattern,
                          made->n_name_examples ? ", such as " : "",
                          made->n_name_examples ? made->name_examples[0] : "");
        return ERR_PTR(-EINVAL);
    }
    obj = obj_new(made, name);
    if (!obj) {
        return ERR_PTR(-ENOMEM);
    }
    obj->counted_in = owner;
    owner->nchildren++;
    return obj;
}

static struct config_item *obj_make_item(struct config_group *group,
                                         const char *name)
{
    struct schema_obj *obj = make_obj(group, name);

    return IS_ERR(obj) ? (struct config_item *)obj : obj_item(obj);
}

static struct config_group *obj_make_group(struct config_group *group,
                                           const char *name)
{
    struct schema_obj *obj = make_obj(group, name);

    return IS_ERR(obj) ? (struct config_group *)obj : &obj->su.su_group;
}

/* rmdir, a failed mkdir (MK11) and unregistration. @pre su_mutex. */
static void obj_drop_item(struct config_group *group, struct config_item *item)
{
    struct schema_obj *obj = obj_of(item);

    (void)group;
    if (obj->counted_in) {
        obj->counted_in->nchildren--;
        obj->counted_in = NULL;
    }
    config_item_put(item);
}

static bool is_required(const struct schema_type *owner_type,
                        unsigned int index)
{
    for (size_t i = 0; i < owner_type->n_required; i++) {
        if (owner_type->required[i] == index) {
            return true;
        }
    }
    return false;
}

/* pending/ -> live/: every required attribute must hold a value (C8).
 * @pre su_mutex and the mutation lock. */
static int obj_commit(struct config_item *item)
{
    struct schema_obj *obj = obj_of(item);
    struct schema_type *ot = obj->counted_in ? obj->counted_in->type : NULL;
    char missing[CFS_SCHEMA_DETAIL_LEN];
    size_t off = 0;

    cfs_schema_clear_detail();
    missing[0] = '\0';
    if (!ot) {
        return -EINVAL; /* not made in pending/: cannot happen */
    }
    pthread_mutex_lock(&obj->vlock);
    for (size_t i = 0; i < ot->n_required; i++) {
        unsigned int idx = ot->required[i];

        if (obj->lens[idx] == 0 && off + 1 < sizeof(missing)) {
            int n = snprintf(missing + off,
                             sizeof(missing) - off,
                             "%s%s",
                             off ? ", " : "",
                             obj->type->attrs[idx].name);

            off = n < 0 ? off : off + (size_t)n;
        }
    }
    pthread_mutex_unlock(&obj->vlock);
    if (off) {
        schema_set_detail("required before commit: %s", missing);
        return -EINVAL;
    }
    obj->live = true;
    return 0;
}

static int obj_uncommit(struct config_item *item)
{
    cfs_schema_clear_detail();
    obj_of(item)->live = false;
    return 0;
}

/* ---- item operations --------------------------------------------------- */

/* show: the value and one newline, the kernel's convention (RD7). */
static ssize_t
obj_show(struct config_item *item, struct configfs_attribute *attr, char *page)
{
    struct schema_obj *obj = obj_of(item);
    struct schema_attr *a = attr_of(attr);
    size_t n;

    pthread_mutex_lock(&obj->vlock);
    n = obj->lens[a->index];
    if (n > CONFIGFS_PAGE_SIZE - 1) {
        n = CONFIGFS_PAGE_SIZE - 1; /* cannot happen: stores are shorter */
    }
    memcpy(page, obj->values[a->index], n);
    pthread_mutex_unlock(&obj->vlock);
    page[n] = '\n';
    return (ssize_t)(n + 1);
}

/* store: strip one trailing newline, validate by kind, keep the value as
 * show() prints it. An empty value unsets an attribute that has no
 * default. @pre the mutation lock. */
static ssize_t obj_store(struct config_item *item,
                         struct configfs_attribute *attr,
                         const char *page,
                         size_t count)
{
    struct schema_obj *obj = obj_of(item);
    struct schema_attr *a = attr_of(attr);
    char why[CFS_SCHEMA_DETAIL_LEN];
    size_t len = count;
    char *canon = NULL;
    char *old;
    int r;

    cfs_schema_clear_detail();
    if (len > 0 && page[len - 1] == '\n') {
        len--;
    }
    if (len == 0 && !a->def) {
        /* Back to unset, the state it started in: whatever the kind, so
         * that undoing a first store (which stores what show() printed,
         * a lone newline) always works. */
        canon = cfs_strdup("");
        r = canon ? 0 : -ENOMEM;
    } else {
        r = schema_value_check(a, page, len, &canon, why, sizeof(why));
    }
    if (r == -ENOMEM) {
        return r;
    }
    if (r < 0) {
        schema_set_detail("%s: %s", a->name, why);
        return r;
    }
    if (obj->live && !canon[0] && obj->counted_in &&
        is_required(obj->counted_in->type, a->index)) {
        schema_set_detail("%s: required while committed", a->name);
        cfs_free(canon);
        return -EINVAL;
    }
    pthread_mutex_lock(&obj->vlock);
    old = obj->values[a->index];
    obj->values[a->index] = canon;
    obj->lens[a->index] = strlen(canon);
    pthread_mutex_unlock(&obj->vlock);
    cfs_free(old);
    return (ssize_t)count;
}

/* allow_link: the target must be an object of this schema whose type the
 * link's directory allows (H8: configfs itself checks nothing, SL7). */
static int obj_allow_link(struct config_item *src, struct config_item *target)
{
    struct schema_obj *owner = owner_of(src);
    struct schema_type *t;
    struct schema_type *tt = NULL;
    char list[CFS_SCHEMA_DETAIL_LEN];
    size_t off = 0;

    cfs_schema_clear_detail();
    if (!owner) {
        return -EPERM; /* not ours: cannot happen */
    }
    t = owner->type;
    if (is_schema_type(target->ci_type)) {
        tt = type_of(target->ci_type);
        for (size_t i = 0; tt->schema == t->schema && i < t->n_allow; i++) {
            if (t->allow[i] == tt) {
                return 0;
            }
        }
    }
    list[0] = '\0';
    for (size_t i = 0; i < t->n_allow && off + 1 < sizeof(list); i++) {
        int n = snprintf(list + off,
                         sizeof(list) - off,
                         "%s%s",
                         i ? ", " : "",
                         t->allow[i]->name);

        off = n < 0 ? off : off + (size_t)n;
    }
    if (tt && tt->schema == t->schema) {
        schema_set_detail("links in %s may point only at: %s (the "
                          "target is a %s)",
                          t->name,
                          list,
                          tt->name);
    } else {
        schema_set_detail("links in %s may point only at: %s (the "
                          "target is not part of %s)",
                          t->name,
                          list,
                          t->schema->subsystem);
    }
    return -EINVAL;
}

/* ---- wiring ------------------------------------------------------------ */

void schema_wire_types(struct cfs_schema *s)
{
    for (size_t i = 0; i < s->n_types; i++) {
        struct schema_type *t = &s->types[i];

        t->ct.ct_name = t->name;
        t->ct.ct_owner = NULL;
        t->ct.ct_item_ops = &t->iops;
        t->ct.ct_group_ops = &t->gops;
        t->ct.ct_attrs = t->ct_attrs;
        t->iops.release = obj_release;
        t->iops.show_attribute = obj_show;
        t->iops.store_attribute = obj_store;
        if (t->has_links) {
            t->iops.allow_link = obj_allow_link;
        }
        if (t->creates) {
            if (t->creates_kind == SCHEMA_MAKE_GROUP) {
                t->gops.make_group = obj_make_group;
            } else {
                t->gops.make_item = obj_make_item;
            }
            t->gops.drop_item = obj_drop_item;
        }
        if (t->commit_type) {
            const struct schema_type *c = t->commit_type;

            /* A committable type with groups of its own is made as a
             * group, any other as an item (docs/schemas.md). */
            t->commit_kind = c->creates || c->commit_type || c->n_dgroups
                                 ? SCHEMA_MAKE_GROUP
                                 : SCHEMA_MAKE_ITEM;
            if (t->commit_kind == SCHEMA_MAKE_GROUP) {
                t->gops.make_group = obj_make_group;
            } else {
                t->gops.make_item = obj_make_item;
            }
            t->gops.drop_item = obj_drop_item;
            t->gops.commit_item = obj_commit;
            t->gops.uncommit_item = obj_uncommit;
        }
    }
}

/* ---- registration ------------------------------------------------------ */

int cfs_schema_register(struct cfs_schema *s)
{
    struct schema_obj *root;
    int r;

    if (s->root_obj) {
        return -EBUSY;
    }
    root = obj_new(s->root, s->subsystem);
    if (!root) {
        return -ENOMEM;
    }
    /* a declared attribute shows its own item's value, nothing else */
    root->su.su_show_item_local = true;
    r = configfs_register_subsystem(&root->su);
    if (r < 0) {
        config_item_put(obj_item(root));
        return r;
    }
    s->root_obj = root;
    return 0;
}

void cfs_schema_unregister(struct cfs_schema *s)
{
    struct schema_obj *root = s->root_obj;

    if (!root) {
        return;
    }
    s->root_obj = NULL;
    configfs_unregister_subsystem(&root->su);
    config_item_put(obj_item(root));
}

bool cfs_schema_registered(const struct cfs_schema *s)
{
    return s->root_obj != NULL;
}

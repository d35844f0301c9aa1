/* SPDX-License-Identifier: MIT */
/*
 * list.h - the intrusive doubly linked list the configfs API is built on.
 *
 * Kernel configfs clients walk cg_children and default_groups with the
 * kernel's list_head helpers, so the same names and semantics are kept here.
 * Everything is static inline; nothing here allocates.
 */
#ifndef CONFIGFS_LIST_H
#define CONFIGFS_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct list_head {
    struct list_head *next, *prev;
};

#define LIST_HEAD_INIT(name)                                                   \
    {                                                                          \
        &(name), &(name)                                                       \
    }
#define LIST_HEAD(name) struct list_head name = LIST_HEAD_INIT(name)

#ifndef container_of
/* The member's type is checked only where the compiler has typeof. */
#define container_of(ptr, type, member)                                        \
    ((type *)(void *)((char *)(ptr)-offsetof(type, member)))
#endif

static inline void INIT_LIST_HEAD(struct list_head *list)
{
    list->next = list;
    list->prev = list;
}

static inline void cfs_list_insert_(struct list_head *entry,
                                    struct list_head *prev,
                                    struct list_head *next)
{
    next->prev = entry;
    entry->next = next;
    entry->prev = prev;
    prev->next = entry;
}

static inline void list_add(struct list_head *entry, struct list_head *head)
{
    cfs_list_insert_(entry, head, head->next);
}

static inline void list_add_tail(struct list_head *entry,
                                 struct list_head *head)
{
    cfs_list_insert_(entry, head->prev, head);
}

static inline void list_del_init(struct list_head *entry)
{
    entry->next->prev = entry->prev;
    entry->prev->next = entry->next;
    INIT_LIST_HEAD(entry);
}

/* Unlike the kernel's list_del() the entry is left self-linked, not
 * poisoned, so a second list_del() is harmless. */
static inline void list_del(struct list_head *entry)
{
    list_del_init(entry);
}

static inline bool list_empty(const struct list_head *head)
{
    return head->next == head;
}

static inline void list_move_tail(struct list_head *entry,
                                  struct list_head *head)
{
    list_del_init(entry);
    list_add_tail(entry, head);
}

#define list_entry(ptr, type, member) container_of(ptr, type, member)
#define list_first_entry(ptr, type, member)                                    \
    list_entry((ptr)->next, type, member)

#define list_for_each(pos, head)                                               \
    for ((pos) = (head)->next; (pos) != (head); (pos) = (pos)->next)

#define list_for_each_safe(pos, n, head)                                       \
    for ((pos) = (head)->next, (n) = (pos)->next; (pos) != (head);             \
         (pos) = (n), (n) = (pos)->next)

/* The kernel's versions take the entry type from typeof(*pos); ISO C17 has
 * no typeof, so these use the GNU __typeof__, which gcc and clang accept in
 * every -std mode. */
#define list_for_each_entry(pos, head, member)                                 \
    for ((pos) = list_entry((head)->next, __typeof__(*(pos)), member);         \
         &(pos)->member != (head);                                             \
         (pos) = list_entry((pos)->member.next, __typeof__(*(pos)), member))

#define list_for_each_entry_safe(pos, n, head, member)                         \
    for ((pos) = list_entry((head)->next, __typeof__(*(pos)), member),         \
        (n) = list_entry((pos)->member.next, __typeof__(*(pos)), member);      \
         &(pos)->member != (head);                                             \
         (pos) = (n),                                                          \
        (n) = list_entry((n)->member.next, __typeof__(*(n)), member))

#endif /* CONFIGFS_LIST_H */

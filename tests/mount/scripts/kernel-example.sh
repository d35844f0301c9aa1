#!/bin/sh
# SPDX-License-Identifier: MIT
# The examples of the kernel's Documentation/filesystems/configfs.rst, as
# a user types them, run unchanged against the mount (CONFIGFS_HOME):
# fakenbd (an item is made with mkdir, configured with echo, read with
# cat, committed from pending/ to live/ with mv when configfs supports
# it) and the LWN-style sequence on the sample module's subsystems
# (mkdir, echo >, cat, ln -s, rmdir). Output goes to stdout for the test
# to compare.
set -e
cd "$CONFIGFS_HOME"

# "mkdir /config/fakenbd/disk1" (committable form: in pending/)
mkdir fakenbd/pending/disk1
ls fakenbd/pending/disk1
echo 10.0.0.1 > fakenbd/pending/disk1/target
echo /dev/sda1 > fakenbd/pending/disk1/device
echo 1 > fakenbd/pending/disk1/rw
cat fakenbd/pending/disk1/target fakenbd/pending/disk1/device
mv fakenbd/pending/disk1 fakenbd/live/disk1
ls fakenbd/live
cat fakenbd/live/disk1/rw
mv fakenbd/live/disk1 fakenbd/pending/disk1
rmdir fakenbd/pending/disk1

# The sample subsystems: a childless item, simple children, groups.
cat 01-childless/description >/dev/null
echo 42 > 01-childless/storeme
cat 01-childless/storeme
mkdir 02-simple-children/child1
echo 7 > 02-simple-children/child1/storeme
cat 02-simple-children/child1/storeme
mkdir 03-group-children/g
mkdir 03-group-children/g/c
ls 03-group-children/g
rmdir 03-group-children/g/c
rmdir 03-group-children/g
rmdir 02-simple-children/child1

#!/bin/sh
# SPDX-License-Identifier: MIT
# The gadget of gadget-setup.sh torn down in the reverse order, as
# Documentation/usb/gadget_configfs.rst ("Cleaning up") says: links out
# of the configurations, configuration strings, configurations,
# functions, gadget strings, the gadget.
set -e
cd "$CONFIGFS_HOME/usb_gadget/g1"
rm configs/c.1/ncm.usb0
rm configs/c.1/acm.GS0
rmdir configs/c.1/strings/0x409
rmdir configs/c.1
rmdir functions/ncm.usb0
rmdir functions/acm.GS0
rmdir strings/0x409
cd ..
rmdir g1

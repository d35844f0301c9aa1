#!/bin/sh
# SPDX-License-Identifier: MIT
# A USB gadget set up as Documentation/usb/gadget_configfs.rst of the
# kernel does it, step by step, in plain sh: run unchanged against the
# mount (CONFIGFS_HOME is where configfs is mounted). An NCM and an ACM
# function in one configuration; binding to a UDC is left out (no UDC).
set -e
cd "$CONFIGFS_HOME/usb_gadget"

# 1. Creating the gadgets
mkdir g1
cd g1
echo 0x1d6b > idVendor
echo 0x0104 > idProduct
echo 0x0100 > bcdDevice
echo 0x0200 > bcdUSB
mkdir strings/0x409
echo 0123456789 > strings/0x409/serialnumber
echo "Foo Inc." > strings/0x409/manufacturer
echo "Bar Gadget" > strings/0x409/product

# 2. Creating the configurations
mkdir configs/c.1
mkdir configs/c.1/strings/0x409
echo "CDC 2xACM+NCM" > configs/c.1/strings/0x409/configuration
echo 120 > configs/c.1/MaxPower

# 3. Creating the functions
mkdir functions/ncm.usb0
mkdir functions/acm.GS0

# 4. Associating the functions with their configurations
ln -s functions/ncm.usb0 configs/c.1
ln -s functions/acm.GS0 configs/c.1

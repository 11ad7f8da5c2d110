"""cabling.xlsx: the cabling plan as a workbook for contractors and label printers."""

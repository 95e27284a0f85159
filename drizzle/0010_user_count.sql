CREATE TABLE `user_count` (
	`type` integer NOT NULL,
	`visibility` integer NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`type`, `visibility`)
);
--> statement-breakpoint
-- The count by class is kept by triggers, so no write path can forget it.
INSERT INTO `user_count` (`type`, `visibility`, `n`) SELECT `type`, `visibility`, COUNT(*) FROM `user` WHERE 1 GROUP BY 1, 2;
--> statement-breakpoint
CREATE TRIGGER `user_count_insert` AFTER INSERT ON `user` BEGIN
  INSERT INTO `user_count` (`type`, `visibility`, `n`) VALUES (new.`type`, new.`visibility`, 1) ON CONFLICT DO UPDATE SET `n` = `n` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `user_count_delete` AFTER DELETE ON `user` BEGIN
  UPDATE `user_count` SET `n` = `n` - 1 WHERE `type` = old.`type` AND `visibility` = old.`visibility`;
END;
--> statement-breakpoint
CREATE TRIGGER `user_count_update` AFTER UPDATE OF `type`, `visibility` ON `user`
  WHEN old.`type` IS NOT new.`type` OR old.`visibility` IS NOT new.`visibility` BEGIN
  UPDATE `user_count` SET `n` = `n` - 1 WHERE `type` = old.`type` AND `visibility` = old.`visibility`;
  INSERT INTO `user_count` (`type`, `visibility`, `n`) VALUES (new.`type`, new.`visibility`, 1) ON CONFLICT DO UPDATE SET `n` = `n` + 1;
END;

-- User search (GET /users/search?q=) matches inside names, full names and public e-mails
-- (LIKE '%kw%'), which no B-tree index serves: it read every user row. A trigram full-text index
-- finds the candidates, the search statement keeps its exact conditions (an e-mail is indexed
-- whatever its privacy; the statement matches only public ones). Kept in step with `user` by triggers.
CREATE VIRTUAL TABLE `user_search` USING fts5(`lower_name`, `full_name`, `email`, tokenize = 'trigram');
--> statement-breakpoint
INSERT INTO `user_search` (rowid, `lower_name`, `full_name`, `email`) SELECT `id`, `lower_name`, `full_name`, `email` FROM `user`;
--> statement-breakpoint
CREATE TRIGGER `user_search_insert` AFTER INSERT ON `user` BEGIN
  INSERT INTO `user_search` (rowid, `lower_name`, `full_name`, `email`) VALUES (new.`id`, new.`lower_name`, new.`full_name`, new.`email`);
END;
--> statement-breakpoint
CREATE TRIGGER `user_search_update` AFTER UPDATE OF `lower_name`, `full_name`, `email` ON `user`
  WHEN old.`lower_name` IS NOT new.`lower_name` OR old.`full_name` IS NOT new.`full_name` OR old.`email` IS NOT new.`email` BEGIN
  UPDATE `user_search` SET `lower_name` = new.`lower_name`, `full_name` = new.`full_name`, `email` = new.`email` WHERE rowid = new.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `user_search_delete` AFTER DELETE ON `user` BEGIN
  DELETE FROM `user_search` WHERE rowid = old.`id`;
END;
